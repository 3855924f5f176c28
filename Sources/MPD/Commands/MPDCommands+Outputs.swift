import MediaRemote

extension MPDCommands {
    /// The audio session's output routes as mpd's outputs. The player plays to one output at a
    /// time: enabling one moves the sound there (and so disables the one before), and the one
    /// in use cannot be disabled, only replaced. With a fixed sink (a FIFO, say) there is one
    /// output, always enabled.
    static let outputCommands: [(String, MPDPermissions, Command)] = [
        ("outputs", .read, { c, a, client throws(MPDError) in
            try Arguments.count(a, 0...0)
            var response = client.response()
            for (index, output) in c.outputs.enumerated() {
                try response.add("outputid", index)
                try response.add("outputname", output.name)
                try response.add("plugin", output.plugin)
                try response.add("outputenabled", output.enabled ? 1 : 0)
            }
            return response
        }),
        ("enableoutput", .admin, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            try await c.setOutput(try Arguments.unsigned(a[0]), enabled: true)
            return client.response()
        }),
        ("disableoutput", .admin, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            try await c.setOutput(try Arguments.unsigned(a[0]), enabled: false)
            return client.response()
        }),
        ("toggleoutput", .admin, { c, a, client throws(MPDError) in
            try Arguments.count(a, 1...1)
            let index = try Arguments.unsigned(a[0])
            let outputs = c.outputs
            guard outputs.indices.contains(index) else { throw .noExist("No such audio output") }
            try await c.setOutput(index, enabled: !outputs[index].enabled)
            return client.response()
        }),
    ]

    struct Output {
        var identifier: String?
        var name: String
        var plugin: String
        var enabled: Bool
    }

    /// The outputs in the session's order (stable while the devices are).
    var outputs: [Output] {
        let session = environment.audioSession
        let routes = session.outputRoutes
        guard !routes.isEmpty, session.canSelectOutputRoute else {
            return [Output(identifier: nil, name: "Default output", plugin: "gstreamer", enabled: true)]
        }
        let current = session.currentOutputRoute
        return routes.map { Output(identifier: $0.identifier, name: $0.name, plugin: "pulse", enabled: $0.identifier == current) }
    }

    func setOutput(_ index: Int, enabled: Bool) async throws(MPDError) {
        let outputs = self.outputs
        guard outputs.indices.contains(index) else { throw .noExist("No such audio output") }
        let output = outputs[index]
        guard enabled != output.enabled else { return }
        guard enabled else {
            throw MPDError(.system, "the player plays to one output at a time: enable another to move the sound there")
        }
        do {
            try await environment.audioSession.selectOutputRoute(output.identifier)
        } catch {
            throw MPDError(.system, "cannot enable \(output.name): \(error)")
        }
    }
}
