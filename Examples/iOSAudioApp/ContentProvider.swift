import MediaPlayer

/// Serves the catalog to the car's browse screen (the playable-content data source) and
/// starts what the driver picks there (its delegate).
///
/// Index paths: `[tab]`, `[tab, collection]`, `[tab, collection, episode]`.
@MainActor
class ContentProvider: NSObject, @MainActor MPPlayableContentDataSource, @MainActor MPPlayableContentDelegate {
    weak var player: AudioPlayer?

    // MARK: MPPlayableContentDataSource

    func numberOfChildItems(at indexPath: IndexPath) -> Int {
        switch indexPath.count {
        case 0:
            return Catalog.tabs.count
        case 1:
            return Catalog.tabs[indexPath[0]].collections.count
        case 2:
            return Catalog.tabs[indexPath[0]].collections[indexPath[1]].episodes.count
        default:
            return 0
        }
    }

    func contentItem(at indexPath: IndexPath) -> MPContentItem? {
        switch indexPath.count {
        case 1:
            let tab = Catalog.tabs[indexPath[0]]
            let item = MPContentItem(identifier: tab.identifier)
            item.title = tab.title
            item.isContainer = true
            return item
        case 2:
            let collection = Catalog.tabs[indexPath[0]].collections[indexPath[1]]
            let item = MPContentItem(identifier: collection.identifier)
            item.title = collection.title
            item.subtitle = collection.subtitle
            item.isContainer = true
            item.isPlayable = true
            return item
        case 3:
            let episode = Catalog.tabs[indexPath[0]].collections[indexPath[1]].episodes[indexPath[2]]
            let item = MPContentItem(identifier: episode.identifier)
            item.title = episode.title
            item.subtitle = episode.artist
            item.isPlayable = true
            item.playbackProgress = 0
            return item
        default:
            return nil
        }
    }

    func childItemsDisplayPlaybackProgress(at indexPath: IndexPath) -> Bool {
        // Podcast episodes show how much was heard; music does not.
        indexPath.count == 2 && indexPath[0] == 0
    }

    func beginLoadingChildItems(at indexPath: IndexPath, completionHandler: @escaping (Error?) -> Void) {
        // The catalog is in memory; a network app would fetch here and call back when done.
        completionHandler(nil)
    }

    // MARK: MPPlayableContentDelegate

    func playableContentManager(
        _ contentManager: MPPlayableContentManager, initiatePlaybackOfContentItemAt indexPath: IndexPath,
        completionHandler: @escaping (Error?) -> Void
    ) {
        guard indexPath.count >= 2, let player else {
            completionHandler(NSError(domain: "AudioApp", code: 1, userInfo: [NSLocalizedDescriptionKey: "Pick a show or an episode"]))
            return
        }
        let collection = Catalog.tabs[indexPath[0]].collections[indexPath[1]]
        player.load(collection.episodes, startingAt: indexPath.count == 3 ? indexPath[2] : 0)
        completionHandler(nil)
    }

    func playableContentManager(_ contentManager: MPPlayableContentManager, didUpdate context: MPPlayableContentManagerContext) {
        print("car connected: \(context.endpointAvailable), limits: \(context.contentLimitsEnforced)")
    }
}
