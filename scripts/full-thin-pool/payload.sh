# Payload of scripts/full-thin-pool/measure; MODE is queue, error or metadata. Lines start with the
# guest's uptime in seconds (T...).
t() { cut -d' ' -f1 /proc/uptime; }
pool() { lvs --noheadings -o lv_attr,data_percent,metadata_percent,lv_health_status,lv_when_full "vg/$1" 2>&1; }
echo "no_space_timeout=$(cat /sys/module/dm_thin_pool/parameters/no_space_timeout)"
if [ "$MODE" = metadata ]; then
    # 1 MiB extents, so that the metadata area can be 2 MiB; no zeroing, so that a 4 KiB write
    # provisions a 64 KiB chunk without writing it all
    pvcreate -q /dev/ubdb && vgcreate -q -s 1M vg /dev/ubdb
    lvcreate -q -y --type thin-pool -Zn -c 64K -L 12G --poolmetadatasize 2M -n pool vg
    lvcreate -q -y -V 12G --thinpool pool -n raw vg
    lvcreate -q -y -V 1G --thinpool pool -n a vg
    mkfs.ext4 -q -m 0 /dev/vg/a && mkdir -p /run/a && mount /dev/vg/a /run/a
    echo "T$(t) pool $(pool pool)"
    fio --name=fill --filename=/dev/vg/raw --rw=randwrite --bs=4k --blockalign=64k --direct=1 --ioengine=psync \
        --number_ios=260000 --size=12G --randrepeat=0 > /run/fio.out 2>&1 &
    i=0
    while [ $i -lt 60 ]; do
        sleep 4
        status=$(dmsetup status vg-pool-tpool)
        echo "T$(t) pool $(pool pool) | $status"
        case "$status" in *" ro "*|*Fail*) break ;; esac
        i=$((i + 1))
    done
    wait
    grep -E 'err=' /run/fio.out
    dd if=/dev/zero of=/run/a/x bs=1M count=4 oflag=direct status=none; echo "ext4 write: exit $?"
    echo "lvcreate into the pool:"; lvcreate -q -y -V 16M --thinpool pool -n new vg; echo "exit $?"
    echo "T$(t) lvextend --poolmetadatasize +8M"; lvextend --poolmetadatasize +8M vg/pool
    echo "T$(t) pool $(pool pool) | $(dmsetup status vg-pool-tpool)"
    dd if=/dev/zero of=/run/a/y bs=1M count=4 oflag=direct status=none; echo "ext4 write after extend: exit $?"
    dmesg | grep -E 'thin|EXT4' | tail -12
    exit 0
fi
# queue or error: a 256 MiB pool, two 512 MiB volumes (ext4 and xfs, as the driver formats them)
pvcreate -q /dev/ubda && vgcreate -q vg /dev/ubda
lvcreate -q -y --type thin-pool -Zy -L 256M --poolmetadatasize 4M -n pool vg
[ "$MODE" = error ] && lvchange --errorwhenfull y vg/pool
lvcreate -q -y -V 512M --thinpool pool -n a vg
lvcreate -q -y -V 512M --thinpool pool -n b vg
mkfs.ext4 -q -m 0 /dev/vg/a && mkfs.xfs -q /dev/vg/b 2> /dev/null
mkdir -p /run/a /run/b && mount /dev/vg/a /run/a && mount /dev/vg/b /run/b
echo "T$(t) start: pool $(pool pool)"
# writer <fs> <dir> <dd flag>: 300 MiB, with O_DIRECT or buffered then fsync'd; says when and how it ended
writer() {
    dd if=/dev/zero of="$2/${3#*=}" bs=1M count=300 "$3" 2> "/run/$1-$3.err"
    echo "T$(t) $1 $3 ended, exit $?: $(grep -v records "/run/$1-$3.err" | tr '\n' ' ')"
    touch "/run/$1-$3.done"
}
writer ext4 /run/a oflag=direct & writer ext4 /run/a conv=fsync &
writer xfs /run/b oflag=direct & writer xfs /run/b conv=fsync &
while [ "$(ls /run/*.done 2> /dev/null | wc -l)" -lt 4 ]; do sleep 5; echo "T$(t) pool $(pool pool)"; done
echo "lvcreate into the pool:"; lvcreate -q -y -V 16M --thinpool pool -n new vg; echo "exit $?"
grep -E '/run/(a|b)' /proc/mounts
echo "T$(t) lvextend -L +512M"; lvextend -q -L +512M vg/pool
echo "T$(t) pool $(pool pool)"
dd if=/dev/zero of=/run/a/after bs=1M count=20 oflag=direct status=none; echo "ext4 write after extend: exit $?"
dd if=/dev/zero of=/run/b/after bs=1M count=20 conv=fsync status=none; echo "xfs write after extend: exit $?"
grep -E '/run/(a|b)' /proc/mounts
umount /run/a /run/b
e2fsck -fn /dev/vg/a > /dev/null 2>&1; echo "e2fsck -fn: exit $?"
xfs_repair -n /dev/vg/b > /dev/null 2>&1; echo "xfs_repair -n: exit $?"
dmesg | grep -E 'thin|EXT4|XFS' | grep -v -e writeback -e 'I/O error' | tail -10
