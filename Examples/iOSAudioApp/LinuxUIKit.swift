// The few UIKit names the app uses, for Linux, which has no UIKit: what `import UIKit` gives
// the app on iOS. Only this file differs between the two platforms.
#if os(Linux)
    import Foundation
    import MediaPlayer

    class UIResponder: NSObject {
        /// Required, so `@main` can make the app's delegate from its type, as UIKit does.
        required override init() { super.init() }
    }

    /// The app's process: on Linux, the run loop of the main thread.
    class UIApplication: NSObject {
        struct LaunchOptionsKey: Hashable, RawRepresentable {
            let rawValue: String
        }

        @MainActor static let shared = UIApplication()

        /// On iOS this routes the headset's and lock screen's buttons to the app; on Linux the
        /// first use of `MPRemoteCommandCenter` already publishes the app on D-Bus.
        func beginReceivingRemoteControlEvents() {}
    }

    @MainActor protocol UIApplicationDelegate: AnyObject {
        func application(
            _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
        ) -> Bool
    }

    extension UIApplicationDelegate where Self: UIResponder {
        /// What `@main` runs, as UIKit's `UIApplicationMain` does: the delegate is told the app
        /// launched, then the main run loop runs for the life of the process.
        static func main() {
            let delegate = Self()
            guard delegate.application(UIApplication.shared, didFinishLaunchingWithOptions: nil) else { exit(1) }
            withExtendedLifetime(delegate) { RunLoop.main.run() }
        }
    }

    /// Where iOS has `UIImage`: MediaPlayer's image type on Linux.
    typealias UIImage = ArtworkImage

    extension ArtworkImage {
        /// The image of the app's resources named `name` (a PNG), as `UIImage(named:)` finds it in
        /// the app's asset catalog.
        convenience init?(named name: String) {
            guard let url = Bundle.module.url(forResource: name, withExtension: "png") else { return nil }
            self.init(contentsOf: url)
        }
    }
#endif
