import DBus
import DBusTestSupport
import ProcessTestSupport
import Dispatch
import MediaPlayer
import Testing

extension MediaPlayerTests {
    @Suite struct Publication {
        @Test func theMainQueueRunsWhileTestsWait() async throws {
            let ran = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
                DispatchQueue.main.async { done.resume(returning: true) }
            }
            #expect(ran)
        }

        @Test func thePlayerIsPublishedUnderTheConfiguredName() async throws {
            let bus = try await MediaPlayerBus.start()
            let name = try await LinuxMediaPlayer.playerBusName()
            #expect(name.description == MediaPlayerBus.mprisName)
            let identity = try await bus.run(
                "gdbus", ["call", "--session", "--dest", MediaPlayerBus.mprisName, "--object-path", "/org/mpris/MediaPlayer2",
                          "--method", "org.freedesktop.DBus.Properties.Get", "org.mpris.MediaPlayer2", "Identity"])
            #expect(identity.stdout.contains("MediaPlayer Tests"))
        }
    }
}
