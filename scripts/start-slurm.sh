#!/usr/bin/env bash
# A one-node Slurm on this machine, for `npm run test:cluster` (test/cluster/): installs Debian's
# slurm-wlm and munge if sbatch is missing, writes a minimal slurm.conf for this host (all its
# CPUs, no accounting, no cgroups) and starts munged, slurmctld and slurmd. Needs root and apt.
# Does nothing when a node is already up. Exits 1, naming the logs, if the node does not come up.
set -euo pipefail
up() { sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; }
if command -v sinfo >/dev/null 2>&1 && up; then exit 0; fi
if ! command -v sbatch >/dev/null 2>&1; then
  echo "== installing slurm-wlm munge"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi
node=$(hostname -s)
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
[ -s /etc/munge/munge.key ] || head -c 1024 /dev/urandom > /etc/munge/munge.key
chown munge:munge /etc/munge/munge.key /run/munge
chmod 400 /etc/munge/munge.key
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=tokcap-test
SlurmctldHost=$node
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ReturnToService=2
NodeName=$node CPUs=$(nproc) RealMemory=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2)) State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
rm -f /etc/slurm/cgroup.conf
# Daemons left from an earlier start whose processes were ended: --force takes over munge's
# stale socket; the controller starts cold (-c), without the old jobs.
pgrep -x munged >/dev/null || su -s /bin/sh munge -c '/usr/sbin/munged --force'
if ! pgrep -x slurmctld >/dev/null; then
  rm -f /var/spool/slurmctld/clustername # written by an earlier configuration; -c discards its state anyway
  /usr/sbin/slurmctld -c
fi
pgrep -x slurmd >/dev/null || /usr/sbin/slurmd
for _ in $(seq 60); do
  if up; then exit 0; fi
  sleep 1
done
echo "start-slurm: the node did not come up; see /var/log/slurm/slurmctld.log and slurmd.log" >&2
exit 1
