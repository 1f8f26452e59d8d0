#!/bin/bash
# Test double of Mooncake's dependencies.sh: same options (-y/--yes, -h/--help), same
# SYSTEM_PACKAGES variable and root check. It never runs the real package manager: APT_GET must
# name the command to use (the tests pass a recorder).

if [ $(id -u) -ne 0 ]; then
    echo "ERROR: Require root permission, try sudo ./dependencies.sh"
    exit 1
fi

SKIP_CONFIRM=false
for arg in "$@"; do
    case $arg in
        -y|--yes)
            SKIP_CONFIRM=true
            ;;
        -h|--help)
            echo "Usage: ./dependencies.sh [OPTIONS]"
            echo "  -y, --yes    Skip confirmation and install all dependencies"
            exit 0
            ;;
    esac
done

if [ "$SKIP_CONFIRM" = false ]; then
    read -p "Do you want to continue? [Y/n] " -n 1 -r
    echo
    if [[ ! $REPLY =~ ^[Yy]$ ]]; then
        echo "Installation cancelled."
        exit 1
    fi
fi

SYSTEM_PACKAGES="build-essential \
                 cmake \
                 git \
                 libgoogle-glog-dev \
                 libjsoncpp-dev \
                 libnuma-dev \
                 libpython3-dev \
                 libzstd-dev"

"${APT_GET:?this test double runs no real apt-get: set APT_GET}" install -y $SYSTEM_PACKAGES
if [ $? -ne 0 ]; then
    echo "ERROR: Failed to install system packages"
    exit 1
fi

git submodule sync --recursive && git submodule update --init --recursive
