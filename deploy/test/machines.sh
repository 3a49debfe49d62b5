# shellcheck shell=bash
# Throw-away Debian 12 machines for make deploy-test: systemd-nspawn
# containers that boot systemd, each on an overlay of one debootstrapped root
# and in a network namespace of its own, on a private bridge, reached over
# SSH with a key made here. Source this file; it defines functions and sets
# nothing up by itself. Needs root, debootstrap, systemd-nspawn
# (systemd-container), nft (nftables) and iproute2.
#
#   machines_init                  the bridge, NAT for the machines' apt/pip, the SSH key
#   machine_up NAME ADDRESS        boot a fresh machine (ADDRESS in $TC_NET.0/24)
#   machine_wait NAME ADDRESS      until it answers over SSH with systemd running
#   machines_down                  stop every machine, unmount, remove the bridge and NAT
#
# The base root is built once, into $TC_CACHE/base-bookworm, and reused: each
# machine writes only to its own overlay under $TC_CACHE/run/NAME.

TC_CACHE=${TC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tunecon/deploy}
TC_BRIDGE=${TC_BRIDGE:-tcbr0}
TC_NET=${TC_NET:-10.77.0}
TC_MIRROR=${TC_MIRROR:-http://deb.debian.org/debian}
TC_NFT_TABLE=tunecon_deploy
# What a cloud image of Debian 12 has: systemd, an SSH server and Python
# (Ansible's modules run on it); the playbooks install everything else.
TC_BASE_PACKAGES=systemd,systemd-sysv,dbus,openssh-server,python3,python3-apt,sudo,iproute2,ca-certificates,locales,gnupg,curl
TC_BASE_STAMP="bookworm minbase $TC_BASE_PACKAGES v1"
# Run heavy work gently: other jobs on this machine take timings.
TC_NICE=(nice -n 19 ionice -c3)

TC_PIDS=()      # the nspawn processes, for machines_down
TC_MOUNTS=()    # the overlays mounted
TC_FORWARD_WAS= # net.ipv4.ip_forward before machines_init
TC_NET_UP=0     # whether this run made the bridge and the NAT

tc_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# tc_step NAME CMD...: run CMD and say how long it took.
tc_step() {
	local name=$1 start end rc=0
	shift
	start=$(date +%s)
	tc_log "$name ..."
	"$@" || rc=$?
	end=$(date +%s)
	if ((rc == 0)); then
		tc_log "$name: done in $((end - start)) s"
	else
		tc_log "$name: FAILED (exit $rc) after $((end - start)) s"
	fi
	return $rc
}

# tc_base_root builds the base root once, into a temporary folder renamed
# when complete, so that an interrupted build is never taken for a base.
tc_base_root() {
	local base=$TC_CACHE/base-bookworm
	if [[ -f $base/.tunecon-stamp && $(cat "$base/.tunecon-stamp") == "$TC_BASE_STAMP" ]]; then
		tc_log "base root: reusing $base"
		return 0
	fi
	rm -rf "$base" "$base.tmp"
	mkdir -p "$TC_CACHE"
	"${TC_NICE[@]}" debootstrap --variant=minbase --include="$TC_BASE_PACKAGES" bookworm "$base.tmp" "$TC_MIRROR" \
		>"$TC_CACHE/debootstrap.log" 2>&1 || {
		tail -20 "$TC_CACHE/debootstrap.log" >&2
		return 1
	}
	# Each machine gets its own identity at boot: no machine id, no host keys.
	: >"$base.tmp/etc/machine-id"
	rm -f "$base.tmp"/etc/ssh/ssh_host_*
	# The machines reach Debian's mirrors and PyPI through this host; trust
	# what it trusts (a proxy's CA, where the network has one).
	if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
		cp /usr/local/share/ca-certificates/*.crt "$base.tmp/usr/local/share/ca-certificates/"
		chroot "$base.tmp" update-ca-certificates >/dev/null 2>&1
	fi
	# Keep downloaded packages: each machine's archive folder is a cache kept
	# between runs (machine_up binds it), so a second run downloads nothing.
	echo 'Binary::apt::APT::Keep-Downloaded-Packages "true"; APT::Keep-Downloaded-Packages "true";' \
		>"$base.tmp/etc/apt/apt.conf.d/10tunecon-keep-debs"
	rm -f "$base.tmp/etc/apt/apt.conf.d/docker-clean"
	echo "$TC_BASE_STAMP" >"$base.tmp/.tunecon-stamp"
	mv "$base.tmp" "$base"
}

# machines_init makes the SSH key, the bridge and the NAT the machines use.
# One set of machines at a time: a second run waits for none and fails.
machines_init() {
	mkdir -p "$TC_CACHE/run"
	exec {TC_LOCK_FD}>"$TC_CACHE/lock"
	flock -n "$TC_LOCK_FD" || { tc_log "another deploy test is running (lock $TC_CACHE/lock)"; return 1; }
	[[ -f $TC_CACHE/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -C tunecon-deploy-test -f "$TC_CACHE/id_ed25519"
	# Holding the lock, a bridge already there is a killed run's.
	ip link show "$TC_BRIDGE" >/dev/null 2>&1 && tc_net_remove
	TC_NET_UP=1
	ip link add "$TC_BRIDGE" type bridge
	ip addr add "$TC_NET.1/24" dev "$TC_BRIDGE"
	ip link set "$TC_BRIDGE" up
	TC_FORWARD_WAS=$(cat /proc/sys/net/ipv4/ip_forward)
	echo 1 >/proc/sys/net/ipv4/ip_forward
	nft -f - <<-EOF
		table ip $TC_NFT_TABLE {
			chain postrouting {
				type nat hook postrouting priority srcnat;
				ip saddr $TC_NET.0/24 oifname != "$TC_BRIDGE" masquerade
			}
		}
	EOF
}

# machine_up NAME ADDRESS boots a fresh machine on an overlay of the base.
machine_up() {
	local name=$1 addr=$2 dir=$TC_CACHE/run/$1
	machine_clean "$name"
	mkdir -p "$dir"/{upper,work,root} "$TC_CACHE/apt-archives/$name/partial"
	mount -t overlay overlay -o "lowerdir=$TC_CACHE/base-bookworm,upperdir=$dir/upper,workdir=$dir/work" "$dir/root"
	TC_MOUNTS+=("$dir/root")
	local root=$dir/root
	echo "$name" >"$root/etc/hostname"
	# As Debian's installer does: the host's own name resolves (sudo asks).
	printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n' "$name" >"$root/etc/hosts"
	ssh-keygen -q -A -f "$root"
	install -d -m 700 "$root/root/.ssh"
	install -m 600 "$TC_CACHE/id_ed25519.pub" "$root/root/.ssh/authorized_keys"
	cat >"$root/etc/systemd/network/10-host0.network" <<-EOF
		[Match]
		Name=host0
		[Network]
		Address=$addr/24
		Gateway=$TC_NET.1
	EOF
	ln -sf /lib/systemd/system/systemd-networkd.service "$root/etc/systemd/system/multi-user.target.wants/systemd-networkd.service"
	# A container has no console to log in on; the getty only waits.
	ln -sf /dev/null "$root/etc/systemd/system/console-getty.service"
	"${TC_NICE[@]}" systemd-nspawn --boot --directory="$root" --machine="$name" --hostname="$name" \
		--register=no --keep-unit --console=read-only --resolv-conf=copy-host \
		--network-bridge="$TC_BRIDGE" --bind="$TC_CACHE/apt-archives/$name:/var/cache/apt/archives" \
		</dev/null >"$dir/console.log" 2>&1 &
	TC_PIDS+=($!)
	echo $! >"$dir/nspawn.pid"
}

tc_ssh() {
	local addr=$1
	shift
	ssh -i "$TC_CACHE/id_ed25519" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o LogLevel=ERROR -o ConnectTimeout=3 "root@$addr" "$@"
}

# machine_wait NAME ADDRESS waits (up to 120 s) for SSH and a booted systemd.
machine_wait() {
	local name=$1 addr=$2 state
	for _ in $(seq 120); do
		state=$(tc_ssh "$addr" systemctl is-system-running 2>/dev/null) || true
		case $state in
		running | degraded) return 0 ;;
		esac
		if ! kill -0 "$(cat "$TC_CACHE/run/$name/nspawn.pid")" 2>/dev/null; then
			tc_log "$name exited while booting:"
			tail -20 "$TC_CACHE/run/$name/console.log" >&2
			return 1
		fi
		sleep 1
	done
	tc_log "$name: no SSH or systemd after 120 s (state: ${state:-none})"
	tail -20 "$TC_CACHE/run/$name/console.log" >&2
	return 1
}

# machine_clean NAME removes what a previous run left of a machine.
machine_clean() {
	local dir=$TC_CACHE/run/$1
	[[ -d $dir ]] || return 0
	mountpoint -q "$dir/root" && umount "$dir/root"
	rm -rf "$dir"
}

# machines_down powers every machine off (SIGTERM makes nspawn ask systemd
# to halt), kills what has not stopped within 20 s, then unmounts and takes
# the network down. Safe to call twice.
machines_down() {
	local pid
	for pid in "${TC_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for _ in $(seq 20); do
		local alive=0
		for pid in "${TC_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
		((alive)) || break
		sleep 1
	done
	for pid in "${TC_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
	for pid in "${TC_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	TC_PIDS=()
	local m
	# Each machine's writes go with it (GBs of packages); its console log stays.
	for m in "${TC_MOUNTS[@]}"; do
		mountpoint -q "$m" && { umount "$m" || umount -l "$m"; }
		mountpoint -q "$m" || rm -rf "$m" "$(dirname "$m")/upper" "$(dirname "$m")/work"
	done
	TC_MOUNTS=()
	machines_down_net
}

# machines_down_net takes down the network this run set up, and only that.
machines_down_net() {
	[[ $TC_NET_UP == 1 ]] || return 0
	tc_net_remove
	TC_NET_UP=0
}

tc_net_remove() {
	nft delete table ip "$TC_NFT_TABLE" 2>/dev/null || true
	ip link del "$TC_BRIDGE" 2>/dev/null || true
	if [[ -n $TC_FORWARD_WAS ]]; then
		echo "$TC_FORWARD_WAS" >/proc/sys/net/ipv4/ip_forward
		TC_FORWARD_WAS=
	fi
}
