# `rdna1ctl search` and `rdna1ctl run` with the real module: the MTYPE arms set the real mode
# through the control device and the search puts it back. The stand-in workload (no GPU here)
# runs as uid 65534 (SUDO_UID), records the mode and its uid, and passes only under enforce:
# the search must run the baseline and the MIOpen steps with MTYPE off (all fail), then
# mtype-enforce, confirm it (two more runs under enforce, the baseline again with MTYPE off),
# say that MTYPE mattered, restore mode audit, and keep RDNA1_MTYPE_MODE=enforce; `run --env` with
# the kept file must run the command under enforce as uid 65534 and put audit back; a search
# interrupted (SIGINT) while the command runs under enforce must put audit back too. It shows
# GPU work as a ROCm process would, by an entry in KFD's process list (lib.sh, kfd_standin_on).
# boot: 2cpu
mtype_down
kfd_standin_on
modprobe rdna1_mtype mode=audit
# The initramfs root is mktemp's 0700 directory: uid 65534 could not even reach /bin/sh.
chmod 755 /
S=/tmp/search
rm -rf $S
mkdir -p $S
chmod 777 $S
cat >$S/workload.sh <<'WL'
mkdir /sys/class/kfd/kfd/proc/$$
mode=$(cat /sys/module/rdna1_mtype/parameters/mode)
echo "$mode $(id -u)" >>/tmp/search/runs
sleep 0.2
rmdir /sys/class/kfd/kfd/proc/$$
[ "$mode" = enforce ]
WL
chmod 755 $S/workload.sh
cd /tmp
rc=0
SUDO_UID=65534 SUDO_GID=65534 rdna1ctl --json search --timeout 60 --keep $S/gpu.env \
	-- sh $S/workload.sh >$S/out.json 2>$S/err || rc=$?
[ "$rc" = 0 ] || fail "search exit $rc: $(cat $S/out.json $S/err)"
eq "$(cat $PARAMS/mode)" audit "mode restored after search"
runs=$(tr '\n' ' ' <$S/runs)
printf '%s\n' "$runs" | grep -Eqx '(off 65534 )+(enforce 65534 ){3}off 65534 ' || fail "runs (mode, uid): $runs"
for want in '"winner":"mtype-enforce"' '"ended":"a configuration kept"' '"policy_restored":true' \
	'"mtype_verdict":"MTYPE mattered' '"kept_to":"/tmp/search/gpu.env"'; do
	grep -q "$want" $S/out.json || fail "search lacks $want: $(head -c 3000 $S/out.json)"
done
grep -qx 'RDNA1_MTYPE_MODE=enforce' $S/gpu.env || fail "kept file: $(cat $S/gpu.env)"
owner=$(ls -ln $S/gpu.env | awk '{print $3}')
[ "$owner" = 65534 ] || fail "the kept file is owned by uid $owner, not 65534"
rm -f $S/runs
rc=0
SUDO_UID=65534 SUDO_GID=65534 rdna1ctl run --env $S/gpu.env -- sh $S/workload.sh >$S/run.out 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "run exit $rc: $(cat $S/run.out)"
eq "$(cat $S/runs)" "enforce 65534" "run's command (mode, uid)"
eq "$(cat $PARAMS/mode)" audit "mode restored after run"
# Interrupted under enforce: the run ends, the mode goes back.
cat >$S/hang.sh <<'WL'
mode=$(cat /sys/module/rdna1_mtype/parameters/mode)
echo "$mode" >>/tmp/search/hang-runs
[ "$mode" = enforce ] && sleep 60
exit 1
WL
chmod 755 $S/hang.sh
SUDO_UID=65534 SUDO_GID=65534 rdna1ctl --json search --timeout 120 -- sh $S/hang.sh >$S/int.json 2>$S/int.err &
spid=$!
i=0
until grep -q enforce $S/hang-runs 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 900 ] || fail "the interrupted search never ran under enforce: $(cat $S/int.err)"
	sleep 0.1
done
eq "$(cat $PARAMS/mode)" enforce "mode during the enforce run"
kill -INT $spid
rc=0
wait $spid || rc=$?
eq "$rc" 1 "exit of the interrupted search"
eq "$(cat $PARAMS/mode)" audit "mode restored after the interrupted search"
grep -q '"ended":"interrupted"' $S/int.json || fail "interrupted search: $(head -c 2000 $S/int.json)"
rm -rf $S
kfd_standin_off
rmmod rdna1_mtype
