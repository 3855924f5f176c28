import Logging
import MediaRemote

/// A start of playback, and how the engine calls the core asked for ended.
extension PlayerCore {
    /// Loads the current item (unless loaded), seeks to `start` and plays. When an item cannot
    /// be played it is skipped, and the next one is tried, until one plays or every item of the
    /// queue failed once. A failing audio output is no item's fault: the player stops where it
    /// is and answers ``RemoteCommandHandlerStatus/deviceNotFound``.
    ///
    /// A later command supersedes the start by cancelling the shell's task: the start then
    /// ends at once, answers ``RemoteCommandHandlerStatus/success`` (the later command has the
    /// last word), and leaves the player meaning to play from `start` with nothing loaded,
    /// unpublished.
    mutating func startPlayback(resumingAt start: Duration) {
        attemptStart(StartAttempt(start: start))
    }

    /// Asks the shell to play the current item, or gives up when none is left to try.
    private mutating func attemptStart(_ attempt: StartAttempt) {
        var attempt = attempt
        guard let item = queue.current, attempt.attempts < max(queue.count, 1) else { return giveUpStarting() }
        attempt.attempts += 1
        attempt.item = item
        attempt.loadedAfresh = false
        var request = StartRequest(item: item)
        if loaded?.identifier != item.identifier {
            // A start from the beginning of a long item resumes where it was left; a resumed
            // start (a restored queue's position) keeps its own.
            if attempt.start == .zero { attempt.start = resumePosition(of: item) }
            // Before loading: a short item is about to finish while it prerolls, and the engine
            // asks then what follows it.
            request.load = handoverSuccessors(after: item)
            if attempt.start > .zero, !item.isLiveStream { request.seek = attempt.start }
            attempt.loadedAfresh = true
        }
        // A new engine plays at 1.
        if (hasEngine ? engineRate : 1) != rate, !item.isLiveStream { request.rate = rate }
        awaiting = .start(attempt)
        effects.append(.start(request))
    }

    mutating func startEnded(_ report: StartReport) {
        guard case .start(var attempt) = awaiting, let item = attempt.item else { return }
        awaiting = nil
        if report.engineExists, !hasEngine {
            hasEngine = true
            engineRate = 1
        }
        if report.loadBegan {
            loaded = nil
            streamTags = nil
            engineDuration = nil
        }
        if report.loaded {
            loaded = item
            engineDuration = report.duration
        }
        if report.rateApplied { engineRate = rate }
        switch report.outcome {
        case .done:
            setPosition(report.position ?? attempt.start, state: .playing)
            // In progress from here: a finished item is one no longer.
            if attempt.loadedAfresh { rememberPosition(of: item, at: attempt.start, finishing: false) }
            reply(.success)
        case .superseded:
            // A later command took over: not the item's fault, and not for this start to go
            // on. The player means to play as asked; the later command decides from there.
            log(.info, "starting \(item.url) was superseded by a later command")
            loaded = nil
            position = attempt.start
            since = now
            state = .playing
            reply(.success)
        case .failed(let error as PlaybackError) where error.kind == .outputDevice:
            log(.warning, "the audio output failed: \(error.message)")
            unload(remembering: false)
            setPosition(.zero, state: .stopped)
            reply(.deviceNotFound)
        case .failed(let error):
            log(.warning, "cannot play \(item.url): \(error)")
            loaded = nil
            attempt.start = .zero
            // No engine at all: nothing will play. Like a listener's "next", repeat one must
            // not retry the same failing item.
            guard hasEngine, queue.moveToNext(), queue.current?.identifier != item.identifier else {
                return giveUpStarting()
            }
            queueChanged()
            attemptStart(attempt)
        }
    }

    private mutating func giveUpStarting() {
        unload(remembering: false)
        setPosition(.zero, state: .stopped)
        reply(.commandFailed)
    }

    /// How a pause, seek, rate change or position read ended.
    mutating func engineReplied(_ reply: EngineReply) {
        guard let awaited = awaiting else { return }
        awaiting = nil
        switch awaited {
        case .pause(let fallback):
            switch reply.outcome {
            case .done: break
            case .superseded:
                // A later command decides what plays; this one's word, paused, stands until then.
                loaded = nil
            case .failed(let error):
                log(.warning, "pausing failed: \(error)")
                // Shown paused when asked: it plays on.
                setPosition(fallback, state: .playing)
                return self.reply(.commandFailed)
            }
            setPosition(reply.position ?? fallback, state: .paused)
            if let item = loaded ?? queue.current { rememberPosition(of: item, at: position) }
            self.reply(.success)
        case .seek(let item, let target):
            switch reply.outcome {
            case .done: break
            case .superseded:
                // A later command decides what plays; it starts from here.
                loaded = nil
                position = target
                since = now
                return self.reply(.success)
            case .failed(let error):
                log(.warning, "seeking \(item.url) failed: \(error)")
                return self.reply(.commandFailed)
            }
            setPosition(target, state: state == .stopped && target > .zero ? .paused : state)
            if state != .stopped { rememberPosition(of: item, at: target) }
            self.reply(.success)
        case .rate(let newRate, let fallback):
            switch reply.outcome {
            case .done: break
            case .superseded(let error), .failed(let error):
                log(.warning, "changing the rate failed: \(error)")
                return self.reply(.commandFailed)
            }
            if hasEngine, loaded != nil { engineRate = newRate }
            rate = newRate
            setPosition(reply.position ?? fallback, state: state)
            self.reply(.success)
        case .interruption(let fallback):
            setPosition(reply.position ?? fallback, state: .interrupted)
            if let item = loaded { rememberPosition(of: item, at: position) }
        case .start, .resolution:
            awaiting = awaited  // not an engine call's reply: still waiting
        }
    }
}
