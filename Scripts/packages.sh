# Debian packages: whether one is installed, and installing those missing. Sourced by the scripts
# that install what they need (setup, package, test-package, benchmark); idempotent.

# package_installed PACKAGE: whether dpkg has PACKAGE installed.
package_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# missing_packages PACKAGE...: prints those not installed, one a line.
missing_packages() {
    local package
    for package in "$@"; do
        package_installed "$package" || echo "$package"
    done
}

# install_missing_packages PACKAGE...: installs those not installed, with sudo unless root;
# apt-get update runs only when something is missing.
install_missing_packages() {
    local -a missing sudo=()
    mapfile -t missing < <(missing_packages "$@")
    ((${#missing[@]})) || return 0
    (($(id -u) == 0)) || sudo=(sudo)
    echo "Installing: ${missing[*]}" >&2
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
