import Glibc

extension LibraryIndex {
    // MARK: Resume points

    /// Every saved resume point, by track path.
    func resumePoints() throws(SQLiteError) -> [String: TrackResumePoint] {
        guard hasResumePoints else { return [:] }
        var points: [String: TrackResumePoint] = [:]
        try database.forEachRow("SELECT path, position_ms, finished FROM resume_points") { row throws(SQLiteError) in
            guard let path = row.text(0) else { return }
            points[path] = TrackResumePoint(position: .milliseconds(row.integer(1) ?? 0), isFinished: row.integer(2) == 1)
        }
        return points
    }

    /// Saves `point` for the track at `path`, replacing its earlier one: one row, one statement.
    func saveResumePoint(_ point: TrackResumePoint, path: String, now: Int64) throws(SQLiteError) {
        try database.run(
            """
            INSERT INTO resume_points (path, position_ms, finished, updated) VALUES (?, ?, ?, ?)
                ON CONFLICT (path) DO UPDATE SET position_ms = excluded.position_ms, finished = excluded.finished,
                    updated = excluded.updated
            """,
            .text(path), .integer(Int64(point.position / .milliseconds(1))), .integer(point.isFinished ? 1 : 0),
            .integer(now))
    }

    static func secondsSince1970() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }

    /// Forgets the resume points of tracks no longer indexed, once ``resumePointGrace`` has
    /// passed since they were saved.
    func pruneResumePoints(now: Int64) throws(SQLiteError) {
        try database.run(
            "DELETE FROM resume_points WHERE updated < ? AND path NOT IN (SELECT path FROM tracks)",
            .integer(now - Self.resumePointGrace.components.seconds))
    }
}
