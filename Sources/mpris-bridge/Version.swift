/// The release this binary is, in one place: `mpris-bridge --version` prints it, and
/// `Scripts/package` reads this line for the Debian package's version (the top entry of
/// `packaging/changelog` must name the same).
enum Version {
    static let current = "0.27.0"
}
