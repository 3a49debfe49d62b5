#!/usr/bin/env bash
# make deploy-test: boots fresh Debian 12 machines (a portal, a worker and two
# team servers for one problem), applies the playbooks to them, runs a
# contest through the portal's HTTP interface (each team's job must pass, on
# its own server), applies the playbooks again (Ansible must report nothing
# changed) and lints them. Prints how long each step took, and the total.
#
# Needs root; run it through make (it needs make dist's files and the
# virtualenv with ansible-core). TC_KEEP=1 leaves the machines up at the end
# until Enter is pressed, for a look around: ssh -i ~/.cache/tunecon/deploy/id_ed25519 root@10.77.0.31
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
deploy=$(dirname "$here")
. "$here/machines.sh"

PROBLEM=${PROBLEM:-blog}
VENV=${VENV:?VENV: the virtualenv with ansible-core (make deploy-test sets it)}
LOAD_SECONDS=${LOAD_SECONDS:-30}
export PATH="$VENV/bin:$PATH"

[[ $(id -u) == 0 ]] || { echo "deploy-test needs root (debootstrap, systemd-nspawn, a bridge)" >&2; exit 2; }
for tool in debootstrap systemd-nspawn nft; do
	command -v "$tool" >/dev/null || { echo "deploy-test needs $tool: apt-get install debootstrap systemd-container nftables" >&2; exit 2; }
done
trap machines_down EXIT
trap 'exit 130' INT TERM

declare -A ADDR=([tc-portal]=$TC_NET.10 [tc-worker]=$TC_NET.20 [tc-team1]=$TC_NET.31 [tc-team2]=$TC_NET.32)
run=$TC_CACHE/run
total_start=$(date +%s)

boot_all() {
	local m
	for m in "${!ADDR[@]}"; do machine_up "$m" "${ADDR[$m]}" || return 1; done
	for m in "${!ADDR[@]}"; do machine_wait "$m" "${ADDR[$m]}" || return 1; done
}

# The inventory of these machines, with fresh secrets each run.
write_inventory() {
	local db_password admin_password
	db_password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
	admin_password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
	echo "$admin_password" >"$run/admin-password"
	# The portal serves HTTPS with a certificate made here, for its address.
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=tc-portal \
		-addext "subjectAltName=IP:${ADDR[tc-portal]}" -keyout "$run/portal.key" -out "$run/portal.pem" 2>/dev/null
	cat >"$run/inventory.yml" <<-EOF
		all:
		  vars:
		    ansible_user: root
		    ansible_ssh_private_key_file: $TC_CACHE/id_ed25519
		    ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
		    tunecon_db_password: $db_password
		  children:
		    portal:
		      hosts:
		        tc-portal: {ansible_host: ${ADDR[tc-portal]}}
		      vars:
		        portal_admin_password: $admin_password
		        portal_tls_cert: $run/portal.pem
		        portal_tls_key: $run/portal.key
		    workers:
		      hosts:
		        tc-worker: {ansible_host: ${ADDR[tc-worker]}}
		    teams:
		      hosts:
		        tc-team1: {ansible_host: ${ADDR[tc-team1]}, team_language: go}
		        tc-team2: {ansible_host: ${ADDR[tc-team2]}, team_language: python}
		      vars:
		        problem: $PROBLEM
		        team_ssh_keys: ["$(cat "$TC_CACHE/id_ed25519.pub")"]
	EOF
}

# apply NAME: ansible-playbook site.yml, its output kept in $run/NAME.log.
apply() {
	(cd "$deploy" && "${TC_NICE[@]}" ansible-playbook -i "$run/inventory.yml" site.yml) >"$run/$1.log" 2>&1 || {
		tail -40 "$run/$1.log" >&2
		return 1
	}
	sed -n '/PLAY RECAP/,$p' "$run/$1.log" >&2
}

# A second apply changes nothing: every host's recap says changed=0.
apply_again() {
	apply apply2 || return 1
	if grep -E 'changed=[1-9]' "$run/apply2.log" >&2; then
		echo "the second apply changed something:" >&2
		grep -B3 '^changed:' "$run/apply2.log" | head -40 >&2
		return 1
	fi
}

# The team servers' nginx logs say which server each job loaded.
requests_to() { tc_ssh "$1" 'wc -l </var/log/nginx/access.log'; }

contest() {
	local before1 before2 after1 after2 redirect
	redirect=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "http://${ADDR[tc-portal]}/")
	[[ $redirect == "301 https://${ADDR[tc-portal]}/" ]] || { echo "the portal's HTTP answers $redirect, not a redirect to HTTPS" >&2; return 1; }
	before1=$(requests_to "${ADDR[tc-team1]}")
	before2=$(requests_to "${ADDR[tc-team2]}")
	python3 "$here/contest.py" --portal "https://${ADDR[tc-portal]}" --cafile "$run/portal.pem" --admin root \
		--admin-password-file "$run/admin-password" --problem "$PROBLEM" --networks "$TC_NET.0/24" \
		--load "$LOAD_SECONDS" --team "team1=${ADDR[tc-team1]}" --team "team2=${ADDR[tc-team2]}" || return 1
	after1=$(requests_to "${ADDR[tc-team1]}")
	after2=$(requests_to "${ADDR[tc-team2]}")
	tc_log "requests served during the contest: tc-team1 $((after1 - before1)), tc-team2 $((after2 - before2))"
	((after1 > before1 && after2 > before2))
}

# What a contestant finds: their login, sudo, the unit of their language,
# its journal, nginx's log.
contestant() {
	local team=$1 lang=$2
	ssh -i "$TC_CACHE/id_ed25519" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o LogLevel=ERROR "contestant@${ADDR[$team]}" "set -e; sudo -n true; systemctl is-active $PROBLEM-$lang;
		test \$(systemctl is-enabled $PROBLEM-$lang) = enabled; ls ~/webapp/$lang >/dev/null;
		sudo journalctl -u $PROBLEM-$lang -n 1 --no-pager >/dev/null; sudo test -s /var/log/nginx/access.log;
		echo \"$team: contestant logs in, sudo works, $PROBLEM-$lang runs\""
}
contestants() { contestant tc-team1 go && contestant tc-team2 python; }

# The manual's one command that switches the language, there and back: then
# POST /initialize answers through nginx, naming the new language where the
# problem's answer names one. dashboard's takes where the services are (here
# nowhere: the next benchmark names its own).
switch_language() {
	local from=$1 to=$2 data=''
	if [ "$PROBLEM" = dashboard ]; then
		data="-H 'Content-Type: application/json' --data '{\"http\": \"http://127.0.0.1:9\", \"https\": \"https://127.0.0.1:9\"}'"
	fi
	ssh -i "$TC_CACHE/id_ed25519" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-o LogLevel=ERROR "contestant@${ADDR[tc-team1]}" "set -e
		sudo systemctl disable --now $PROBLEM-$from && sudo systemctl enable --now $PROBLEM-$to
		for i in \$(seq 120); do
			# A body that names a language (blog, bank, leagues) must name this one.
			if body=\$(curl -sf -X POST $data http://127.0.0.1/initialize) &&
				{ ! grep -qE '\"(go|python)\"' <<<\"\$body\" || grep -q '\"$to\"' <<<\"\$body\"; }; then
				echo \"tc-team1: switched from $from to $to in \$i s\"; exit 0
			fi
			sleep 1
		done
		echo 'tc-team1: the app never answered in $to' >&2; exit 1"
}
switch_languages() { switch_language go python && switch_language python go; }

lint() { (cd "$deploy" && ansible-lint --offline); }

tc_step "base root (debootstrap bookworm, built once)" tc_base_root
tc_step "bridge $TC_BRIDGE and NAT" machines_init
tc_step "boot 4 machines (portal, worker, 2 team servers)" boot_all
write_inventory
tc_step "apply the playbooks (first time)" apply apply1
tc_step "contest: 2 teams imported with their servers, a job each, through the portal" contest
tc_step "contestants' view of the team servers" contestants
tc_step "switch tc-team1's language, and back, as the manual says" switch_languages
tc_step "apply the playbooks again (must change nothing)" apply_again
tc_step "ansible-lint" lint
tc_log "deploy-test passed: total $(($(date +%s) - total_start)) s"
if [[ ${TC_KEEP:-} == 1 ]]; then
	read -r -p "machines are up (TC_KEEP=1); press Enter to tear them down " _
fi
