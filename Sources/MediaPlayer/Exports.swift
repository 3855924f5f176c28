// Apple's MediaPlayer module brings Foundation with it: an app that says only
// `import MediaPlayer` uses `NSObject`, `IndexPath` and `TimeInterval` in its MediaPlayer code.
@_exported import Foundation
