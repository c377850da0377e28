#!/usr/bin/env bash
# Makes patched/<crate>-<version>/, the pristine crate from crates.io with
# patches/<crate>-<version>.patch applied, for Cargo.toml's [patch.crates-io] to point at.
# The repository holds only our diffs, not the crates' source; this script puts them together.
# build.rs (sandbox-images/python-wasm) runs it before every guest build; run it by hand before
# running cargo in sandbox-images/python yourself. It does nothing when every patch is applied.
# Needs only bash, coreutils, tar, curl, patch and sha256sum.
set -euo pipefail

# SHA-256 of each pristine .crate, as crates.io's index records it (its `cksum`): a crate that
# is not exactly the published one is never patched.
declare -rA CRATE_SHA256=(
    [rustpython-vm-0.6.0]=0f5e6290260601ddbba6cbe917df9d24725aa6664f61c5bdc1ba24db9c81f346
)
# Inside each patched crate: the SHA-256 of the patch it was made with.
readonly STAMP=.sluice-patch-sha256

guest_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
patches_dir="$guest_dir/patches"
patched_dir="$guest_dir/patched"
cargo_home="${CARGO_HOME:-$HOME/.cargo}"

fail() {
    echo "apply.sh: $*" >&2
    exit 1
}

sha256_of() {
    local sum
    sum="$(sha256sum <"$1")"
    echo "${sum%% *}"
}

# Temporary directories of this run, removed however it ends.
temps=()
cleanup() {
    if ((${#temps[@]})); then rm -rf "${temps[@]}"; fi
}
trap cleanup EXIT

shopt -s nullglob
for patch_file in "$patches_dir"/*.patch; do
    name="$(basename "$patch_file" .patch)"
    # <crate>-<version>: crate names have no dots, so the version starts at the first `-N.`.
    [[ "$name" =~ ^([A-Za-z0-9_-]+)-([0-9]+\.[0-9]+\.[0-9]+.*)$ ]] ||
        fail "$patch_file: not named <crate>-<version>.patch"
    crate="${BASH_REMATCH[1]}"
    version="${BASH_REMATCH[2]}"
    expected="${CRATE_SHA256[$name]:-}"
    [[ -n "$expected" ]] ||
        fail "no SHA-256 for $name.crate in CRATE_SHA256: add the checksum crates.io's index records for it"

    dest="$patched_dir/$name"
    patch_sha="$(sha256_of "$patch_file")"
    if [[ -f "$dest/$STAMP" && "$(<"$dest/$STAMP")" == "$patch_sha" ]]; then
        continue
    fi

    # Built beside the destination, so the final mv is a rename within one file system.
    mkdir -p "$patched_dir"
    work="$(mktemp -d "$patched_dir/.tmp-$name.XXXXXX")"
    temps+=("$work")

    crate_file=""
    for cached in "$cargo_home"/registry/cache/*/"$name.crate"; do
        crate_file="$cached"
        break
    done
    if [[ -z "$crate_file" ]]; then
        crate_file="$work/$name.crate"
        url="https://static.crates.io/crates/$crate/$name.crate"
        echo "apply.sh: downloading $url" >&2
        curl --fail --silent --show-error --location --retry 3 --output "$crate_file" "$url" ||
            fail "downloading $url failed"
    fi
    actual="$(sha256_of "$crate_file")"
    [[ "$actual" == "$expected" ]] ||
        fail "$crate_file has SHA-256 $actual, not $expected (the published $crate $version): refusing to patch it"

    tar -xzf "$crate_file" -C "$work"
    [[ -f "$work/$name/Cargo.toml" ]] || fail "$crate_file does not unpack to $name/"
    # --forward: a patch that looks applied already is an error, not a reversal. --fuzz=0: the
    # diff was made against exactly this crate, so a hunk that needs fuzz is a wrong diff.
    patch --directory="$work/$name" -p1 --forward --batch --fuzz=0 --no-backup-if-mismatch \
        --input="$patch_file" >&2 ||
        fail "$patch_file does not apply cleanly to $crate $version (see above)"
    echo "$patch_sha" >"$work/$name/$STAMP"

    # Another run may have finished the same work meanwhile (two builds at once).
    if [[ -f "$dest/$STAMP" && "$(<"$dest/$STAMP")" == "$patch_sha" ]]; then
        continue
    fi
    rm -rf "$dest"
    # -T: if $dest reappeared, fail rather than move the new crate inside it.
    mv -T "$work/$name" "$dest"
    echo "apply.sh: ${dest#"$guest_dir"/} is $crate $version with patches/$name.patch" >&2
done
