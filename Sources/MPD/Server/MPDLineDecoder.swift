import NIOCore

/// Cuts a connection's bytes into request lines (without their `\n`), refusing a line longer
/// than the limit before it is buffered further: a client cannot make the server hold more
/// than one line's bytes (plus what one read brought) by never sending a newline.
///
/// All the complete lines of one read go on as one batch, so that the session answers a
/// client's pipelined commands with one write, as mpd does.
struct MPDLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = [ByteBuffer]

    /// A line exceeded ``MPDLimits/maximumLineBytes``; the connection is closed, as mpd does.
    struct LineTooLong: Error, CustomStringConvertible {
        var limit: Int
        var description: String { "a request line is longer than \(limit) bytes" }
    }

    /// The longest line, newline included.
    let maximumLineBytes: Int
    /// How far the buffer was searched for a newline, so a long line is scanned once.
    private var searched = 0

    init(maximumLineBytes: Int) {
        self.maximumLineBytes = maximumLineBytes
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        var lines: [ByteBuffer] = []
        // The lines before one too long are still answered, as they were sent first.
        defer { if !lines.isEmpty { context.fireChannelRead(wrapInboundOut(lines)) } }
        while true {
            let view = buffer.readableBytesView
            guard let newline = view[(view.startIndex + searched)...].firstIndex(of: UInt8(ascii: "\n")) else {
                searched = view.count
                guard view.count < maximumLineBytes else { throw LineTooLong(limit: maximumLineBytes) }
                return .needMoreData
            }
            let length = newline - view.startIndex
            guard length < maximumLineBytes else { throw LineTooLong(limit: maximumLineBytes) }
            searched = 0
            lines.append(buffer.readSlice(length: length)!)
            buffer.moveReaderIndex(forwardBy: 1)
        }
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        // A last line without its newline is no request (mpd drops it too).
        _ = try decode(context: context, buffer: &buffer)
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }
}
