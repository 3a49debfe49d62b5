#!/usr/bin/env bash
# Boots two throw-away Debian 12 machines, checks that each runs systemd,
# that they reach each other and Debian's mirror, and tears them down: the
# machine harness on its own (make deploy-boot), a minute or so once the
# base root is built.
set -euo pipefail
cd "$(dirname "$0")"
. ./machines.sh

[[ $(id -u) == 0 ]] || { echo "deploy-boot needs root (debootstrap, systemd-nspawn, a bridge)" >&2; exit 2; }
trap machines_down EXIT
trap 'exit 130' INT TERM

start=$(date +%s)
tc_step "base root (debootstrap bookworm, built once)" tc_base_root
tc_step "bridge $TC_BRIDGE and NAT" machines_init
boot_two() {
	machine_up tc-a "$TC_NET.11" && machine_up tc-b "$TC_NET.12" &&
		machine_wait tc-a "$TC_NET.11" && machine_wait tc-b "$TC_NET.12"
}
tc_step "boot two machines" boot_two
tc_step "tc-a: systemd is PID 1" tc_ssh "$TC_NET.11" 'test "$(cat /proc/1/comm)" = systemd && systemctl is-system-running; hostname'
tc_step "tc-a reaches tc-b" tc_ssh "$TC_NET.11" "bash -c 'echo > /dev/tcp/$TC_NET.12/22'"
tc_step "tc-b reaches Debian's mirror" tc_ssh "$TC_NET.12" 'apt-get update -qq && echo apt ok'
tc_log "total: $(($(date +%s) - start)) s"
