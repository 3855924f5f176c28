import MediaRemote
import Testing

@Suite("PlaybackRateOptions")
struct PlaybackRateTests {
    let options = PlaybackRateOptions(supportedPlaybackRates: [0.5, 1, 1.25, 1.5, 2])

    @Test func ratesAreNormalised() {
        let options = PlaybackRateOptions(
            supportedPlaybackRates: [2, 1, .nan, .infinity, -1, 0, 1, 0.5, -.infinity, 2])
        #expect(options.supportedPlaybackRates == [0.5, 1, 2])
        // No valid rate means normal speed only.
        #expect(PlaybackRateOptions().supportedPlaybackRates == [1])
        #expect(PlaybackRateOptions(supportedPlaybackRates: []).supportedPlaybackRates == [1])
        #expect(PlaybackRateOptions(supportedPlaybackRates: [0, -2, .nan]).supportedPlaybackRates == [1])
    }

    @Test func settingRatesNormalisesThemToo() {
        var options = PlaybackRateOptions()
        options.supportedPlaybackRates = [1.5, 1, 1.5, -1]
        #expect(options.supportedPlaybackRates == [1, 1.5])
        options.supportedPlaybackRates = []
        #expect(options.supportedPlaybackRates == [1])

        let command = RemoteCommandCenter().changePlaybackRateCommand
        command.supportedPlaybackRates = [2, 0, .nan, 1]
        #expect(command.supportedPlaybackRates == [1, 2])
        #expect(command.options == PlaybackRateOptions(supportedPlaybackRates: [1, 2]))
    }

    @Test func minimumAndMaximumRate() {
        #expect(options.minimumRate == 0.5)
        #expect(options.maximumRate == 2)
        #expect(PlaybackRateOptions().minimumRate == 1)
        #expect(PlaybackRateOptions().maximumRate == 1)
    }

    @Test(arguments: [
        (1.3, 1.25), (0.1, 0.5), (100, 2), (1.25, 1.25), (1.9, 2), (0.7, 0.5), (1.1, 1),
        (0.75, 1), (1.375, 1.5),  // ties go to the faster rate
    ])
    func nearestSupportedRateSnaps(requested: Double, expected: Double) {
        #expect(options.nearestSupportedRate(to: requested) == expected)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, -1, 0, -0.0])
    func nearestSupportedRateRejectsInvalidRates(requested: Double) {
        #expect(options.nearestSupportedRate(to: requested) == nil)
    }

    @Test func nearestSupportedRateWorksForRatesThatAreNotMultiplesOfAHalf() {
        let options = PlaybackRateOptions(supportedPlaybackRates: [0.8, 1, 1.1, 1.7])
        #expect(options.nearestSupportedRate(to: 1.06) == 1.1)
        #expect(options.nearestSupportedRate(to: 1.3) == 1.1)
        #expect(options.nearestSupportedRate(to: 1.5) == 1.7)
        #expect(options.nearestSupportedRate(to: 0.85) == 0.8)
        #expect(options.nearestSupportedRate(to: 0.95) == 1)
    }

    @Test func supportedRateAfterCyclesAndWraps() {
        #expect(options.supportedRate(after: 0.5) == 1)
        #expect(options.supportedRate(after: 1) == 1.25)
        #expect(options.supportedRate(after: 1.1) == 1.25, "an unsupported rate moves to the next faster one")
        #expect(options.supportedRate(after: 2) == 0.5, "wraps from the fastest to the slowest")
        #expect(options.supportedRate(after: 10) == 0.5)
        var rate = 1.0
        var visited: [Double] = []
        for _ in options.supportedPlaybackRates {
            rate = options.supportedRate(after: rate)
            visited.append(rate)
        }
        #expect(visited == [1.25, 1.5, 2, 0.5, 1])
    }
}
