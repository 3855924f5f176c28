import DBus
import Dispatch
import Foundation
import MPRIS
import MediaRemote
import Synchronization

/// The one set of MediaRemote objects behind Apple's singletons, and their publication on D-Bus.
///
/// Apple's classes are a skin: ``MPRemoteCommandCenter`` over ``commands``,
/// ``MPNowPlayingInfoCenter`` over ``nowPlaying``, ``MPPlayableContentManager`` over
/// ``content``; MPRIS and the media tree serve these as they serve any MediaRemote app.
final class MediaPlayerRuntime: Sendable {
    static let shared = MediaPlayerRuntime(configuration: LinuxMediaPlayer.freezeConfiguration())

    let configuration: LinuxMediaPlayer.Configuration
    let commands = RemoteCommandCenter()
    let nowPlaying = NowPlayingInfoCenter()
    let content = PlayableContentManager()

    private let connection = Mutex<Task<Connection, any Error>?>(nil)
    private let player = Mutex<Task<BusName, any Error>?>(nil)
    private let tree = Mutex<Task<BusName, any Error>?>(nil)

    init(configuration: LinuxMediaPlayer.Configuration) {
        self.configuration = configuration
    }

    /// Publishes the MPRIS player, once; later calls return the same publication.
    ///
    /// It starts after the main queue's current turn, so the targets an app adds in the same
    /// turn as its first use of a centre are offered from the first moment. `CanControl` is
    /// true: an iOS app may add its targets in any later turn (once its player exists), and a
    /// player published without control could never gain it (the property is constant).
    @discardableResult
    func publishPlayer() -> Task<BusName, any Error> {
        player.withLock { player in
            if let player { return player }
            let task = Task { [self] in
                do {
                    await Self.afterMainQueueTurn()
                    var mpris = MPRISConfiguration(
                        playerName: configuration.playerName, identity: configuration.identity,
                        desktopEntry: configuration.desktopEntry,
                        artworkCacheDirectory: configuration.artworkCacheDirectory)
                    mpris.canControl = true
                    // On iOS a feedback command swaps the lock screen's previous button, but
                    // the previous-track command still reaches the app from headsets and cars.
                    mpris.radioModeHidesPrevious = false
                    // Commands are handled where the app's handlers run: no hop on their way.
                    mpris.commandExecutor = MainQueue.executor
                    let service = try MPRISService(configuration: mpris, commands: commands, nowPlaying: nowPlaying)
                    let name = try await service.publish(on: try await bus())
                    services.withLock { $0.append(service) }
                    return name
                } catch {
                    Self.report("cannot publish the player on D-Bus: \(error)")
                    throw error
                }
            }
            player = task
            return task
        }
    }

    /// Publishes the browsable tree, once; later calls return the same publication.
    @discardableResult
    func publishTree() -> Task<BusName, any Error> {
        tree.withLock { tree in
            if let tree { return tree }
            let task = Task { [self] in
                do {
                    await Self.afterMainQueueTurn()
                    let service = try MediaTreeService(
                        name: configuration.playerName, displayName: configuration.identity, content: content,
                        artworkCacheDirectory: configuration.artworkCacheDirectory)
                    let name = try await service.publish(on: try await bus())
                    services.withLock { $0.append(service) }
                    return name
                } catch {
                    Self.report("cannot publish the media tree on D-Bus: \(error)")
                    throw error
                }
            }
            tree = task
            return task
        }
    }

    /// The published services, kept for the life of the process.
    private let services = Mutex<[any Sendable]>([])

    /// The one connection both publications share.
    private func bus() async throws -> Connection {
        let task = connection.withLock { connection in
            if let connection { return connection }
            let address = configuration.busAddress
            let task = Task { try await Connection.connect(to: address.map { .address($0) } ?? .session) }
            connection = task
            return task
        }
        return try await task.value
    }

    /// Returns once the main queue has run what was queued on it before.
    static func afterMainQueueTurn() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.main.async { done.resume() }
        }
    }

    /// Tells the developer, on standard error, why the app is not reachable: iOS has no such
    /// failure, so nothing in Apple's API can report it.
    private static func report(_ message: String) {
        FileHandle.standardError.write(Data("MediaPlayer: \(message)\n".utf8))
    }
}
