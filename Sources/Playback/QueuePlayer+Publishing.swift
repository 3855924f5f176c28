import AsyncSupport
import Logging
import MediaRemote

/// The effects that need no wait: what remotes are shown (the now-playing centre, the commands
/// they may send), the change observers, the resume-point store, the checkpoints, the log.
extension QueuePlayer {
    func apply(_ effect: PlayerEffect) {
        switch effect {
        case .showQueue(let entries):
            nowPlaying.playbackQueue = entries
        case .showNowPlaying(let info, let since):
            nowPlaying.publish(info, at: since)
        case .enableCommands(let available):
            // While remote commands are held for the queue being restored, a remote may already
            // send play or pause: it is carried out on the restored queue.
            let playable = available.hasItems || remoteCommandHold.isHolding
            commands.performBatchUpdates {
                commands.playCommand.isEnabled = playable
                commands.pauseCommand.isEnabled = playable
                commands.togglePlayPauseCommand.isEnabled = playable
                commands.nextTrackCommand.isEnabled = available.hasNext
                commands.previousTrackCommand.isEnabled = available.hasItems
            }
        case .showModes(let repeatMode, let shuffleMode):
            commands.performBatchUpdates {
                if let repeatMode { commands.changeRepeatModeCommand.currentRepeatType = repeatMode }
                if let shuffleMode { commands.changeShuffleModeCommand.currentShuffleType = shuffleMode }
            }
        case .showVolume(let volume):
            nowPlaying.volume = volume
        case .setEngineVolume(let volume):
            engine?.volume = volume
        case .prepareHandover(let successors):
            handover.plan(successors, resetting: true)
        case .updateHandover(let successors):
            handover.plan(successors, resetting: false)
        case .notifyObservers(let snapshot):
            changeObservers.notify(snapshot)
        case .notifyEvents(let changes):
            eventObservers.notify(changes)
        case .saveResumePoint(let point, let item):
            guard let store = resumePoints, store.remembersPosition(of: item) else { return }
            store.save(point, of: item)
        case .checkpoints(let running):
            runCheckpoints(running)
        case .log(let level, let message):
            logger.log(level: level, "\(message)")
        case .reply, .edited, .start, .pause, .seek, .setRate, .readPosition, .resolve, .stopEngine:
            assertionFailure("\(effect) needs a wait: only run(_:) performs it")
        }
    }

    /// Starts the checkpoints while playing (the observers hear the position every interval,
    /// so a saved state is never much older after a crash), stops them otherwise.
    private func runCheckpoints(_ running: Bool) {
        if running, checkpoints == nil {
            let interval = configuration.positionCheckpointInterval
            checkpoints = Task(executorPreference: taskExecutor) { [weak self] in
                while (try? await Task.sleep(for: interval)) != nil {
                    await self?.checkpoint()
                }
            }
        } else if !running {
            checkpoints?.cancel()
            checkpoints = nil
        }
    }

    private func checkpoint() {
        apply(core.handle(.checkpoint, at: .now))
    }
}
