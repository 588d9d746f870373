# tests/kernel/apt_private.sh (sourced): apt with a state of its own, so
# that packages the system's apt does not list (sid's; other
# architectures') can be listed and downloaded without touching the
# system's sources, lists or dpkg.
#
# apt_private DIR ARCHS LINE...: writes DIR/apt/sources.list with one
# "deb ... LINE" per LINE ("sid main", "bookworm main"), naming the
# archive URI the system's own sources use (a mirror set up there is
# used; "URI-security" for a LINE whose suite ends in -security), sets
# APT=(apt's -o options for that state, ARCHS: "amd64" or "amd64 arm64
# ..."), and fetches the lists when they are missing or older than a day
# (an old list names .debs the archive no longer has) or fetched for
# other sources. Returns 1 with the
# reason in APT_ERR when no package list could be fetched.
apt_private() {
	local dir=$1 archs=$2 uri line a
	shift 2
	mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
	dir=$(cd "$dir" && pwd) # apt reads a relative path from /etc/apt
	uri=$(grep -rhE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
		grep -oE 'https?://[^ ]+/debian/?( |$)' | grep -v security | head -1)
	uri=${uri% }
	uri=${uri%/}
	uri=${uri:-http://deb.debian.org/debian}
	: >"$dir/apt/sources.list"
	for line in "$@"; do
		case ${line%% *} in
		*-security) printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s-security %s\n' "$uri" "$line" ;;
		*) printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s\n' "$uri" "$line" ;;
		esac >>"$dir/apt/sources.list"
	done
	APT=(-o "Dir::Etc::sourcelist=$dir/apt/sources.list" -o Dir::Etc::sourceparts=-
		-o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache"
		-o Dir::State::status=/dev/null -o Debug::NoLocking=1 -o "APT::Architecture=${archs%% *}")
	for a in $archs; do APT+=(-o "APT::Architectures::=$a"); done
	# Fetched again when older than a day or fetched for other sources.
	if [ -z "$(find "$dir/apt/lists" -name '*_Packages*' -mtime -1 2>/dev/null)" ] ||
		! cmp -s "$dir/apt/sources.list" "$dir/apt/sources.list.fetched"; then
		if ! apt-get "${APT[@]}" update -qq >/dev/null 2>"$dir/apt/update.err"; then
			APT_ERR="apt-get update failed: $(tail -1 "$dir/apt/update.err")"
			return 1
		fi
		# apt-get update only warns when an index fails to download.
		if [ -z "$(find "$dir/apt/lists" -name '*_Packages*' -mtime -1)" ]; then
			APT_ERR="apt-get update fetched no package list: $(head -1 "$dir/apt/update.err")"
			return 1
		fi
		cp "$dir/apt/sources.list" "$dir/apt/sources.list.fetched"
	fi
}
