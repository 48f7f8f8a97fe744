# Sourced by scripts/install_*_test_deps.sh (Debian 12): `apt_install PKG...` installs packages
# without prompts, through sudo when not run as root.
apt_install() {
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        sudo="sudo"
    fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "$@"
}
