// `FIFOKeeper`: holds the named pipe that the output's filesink writes to open for writing, for
// as long as the pipeline lives.
//
// Part of the GStreamer binding (this folder).

import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps the named pipe at `path` open for writing while the engine lives, when the output is a
/// `filesink` writing to one (Snapcast's `snapfifo`). Nothing is ever written through it.
///
/// filesink closes its file whenever the pipeline goes to NULL, which the engine does at every
/// load. Without this, each track change leaves the pipe with no writer for a moment: the
/// reader (snapserver) reads end of file, closes and reopens 100 ms later, and a filesink that
/// reopened in between writes into a pipe without a reader (EPIPE: the item fails and is
/// skipped). With one more writer held here, the reader never sees its writers go, as with
/// mpd's FIFO output, which stays open across songs.
///
/// Only a writer is held, never a reader: when the reader goes away (snapserver stops), the
/// output's next write still fails and playback stops, instead of blocking on a full pipe that
/// nobody reads, which would hold the pipeline's state changes.
///
/// Checked again at each load, since the pipe may be made (or remade) after the engine started.
final class FIFOKeeper: Sendable {
    let path: String
    private struct Held {
        var descriptor: Int32
        var device: UInt
        var inode: UInt
    }
    private let held = Mutex<Held?>(nil)

    init(path: String) {
        self.path = path
        holdOpen()
    }

    /// Opens the pipe now at `path` unless it is the one held already; lets go of a pipe that
    /// has been replaced or removed. Does nothing for a path that is not a named pipe.
    func holdOpen() {
        held.withLock { held in
            var info = stat()
            let isPipe = stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO
            if let current = held, isPipe, current.device == UInt(info.st_dev), current.inode == UInt(info.st_ino) {
                return
            }
            if let current = held {
                close(current.descriptor)
                held = nil
            }
            guard isPipe else { return }
            // Opening write-only without a reader fails (ENXIO): a reader of our own, opened
            // first and closed once the writer is open, lets it open whoever reads.
            let bridge = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            guard bridge >= 0 else { return }
            let descriptor = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            close(bridge)
            guard descriptor >= 0 else { return }
            held = Held(descriptor: descriptor, device: UInt(info.st_dev), inode: UInt(info.st_ino))
        }
    }

    deinit {
        held.withLock { held in
            if let held { close(held.descriptor) }
        }
    }
}
