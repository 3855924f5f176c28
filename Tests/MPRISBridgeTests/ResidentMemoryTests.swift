import CMalloc
import Glibc
import Testing

/// The trim's rule for data in a writable mapping (`cmalloc_release_unwritten_pages`): a page
/// still the file's, or not mapped, is given back; a written page keeps what was written.
@Suite struct ResidentMemoryTests {
    @Test func unwrittenPagesAreGivenBackAndAWrittenPageKeepsItsData() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var template = Array("/tmp/resident-memory-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        defer {
            close(fd)
            unlink(template)
        }
        let contents = [UInt8](repeating: 0x61, count: 4 * page)
        #expect(write(fd, contents, contents.count) == contents.count)
        let mapped = mmap(nil, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0)
        try #require(mapped != MAP_FAILED)
        let mapping = try #require(mapped)
        defer { munmap(mapping, 4 * page) }
        let bytes = mapping.assumingMemoryBound(to: UInt8.self)
        // Page 0 and 3 read (the file's pages), page 1 written (a private copy), page 2 untouched.
        #expect(bytes[0] == 0x61 && bytes[3 * page] == 0x61)
        bytes[page] = 0x62

        let start = UInt(bitPattern: mapping)
        let released = cmalloc_release_unwritten_pages(cmalloc_range(start: start, end: start + UInt(4 * page)))

        #expect(released == 3 * page)
        #expect(bytes[page] == 0x62)
        #expect(bytes[0] == 0x61 && bytes[2 * page] == 0x61 && bytes[3 * page] == 0x61)
    }

    @Test func anEmptyRangeGivesBackNothing() {
        #expect(cmalloc_release_unwritten_pages(cmalloc_range(start: 0, end: 0)) == 0)
    }
}
