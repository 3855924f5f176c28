import NIOCore

/// Cuts a connection's bytes into request lines (without their `\n`), refusing a line longer
/// than the limit before it is buffered further: a client cannot make the server hold more
/// than one line's bytes (plus what one read brought) by never sending a newline.
struct MPDLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

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
        let view = buffer.readableBytesView
        guard let newline = view[(view.startIndex + searched)...].firstIndex(of: UInt8(ascii: "\n")) else {
            searched = view.count
            guard view.count < maximumLineBytes else { throw LineTooLong(limit: maximumLineBytes) }
            return .needMoreData
        }
        let length = newline - view.startIndex
        guard length < maximumLineBytes else { throw LineTooLong(limit: maximumLineBytes) }
        searched = 0
        let line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        // A last line without its newline is no request (mpd drops it too).
        while try decode(context: context, buffer: &buffer) == .continue {}
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }
}
