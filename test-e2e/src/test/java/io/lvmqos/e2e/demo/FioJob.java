package io.lvmqos.e2e.demo;

import java.nio.file.Path;
import java.util.List;

/**
 * The fio runs of the demo, each one direction: sequential 1 MiB I/Os for bandwidth limits, random
 * 4 KiB I/Os for IOPS limits. Direct I/O, one at a time (psync), so the page cache neither hides
 * reads nor delays writes, and what fio counts is what reached the volume's device.
 */
enum FioJob {
    SEQ_WRITE("write", "write", "1M", "seq write 1M", true),
    SEQ_READ("read", "read", "1M", "seq read 1M", true),
    RAND_WRITE("randwrite", "write", "4k", "rand write 4k", false),
    RAND_READ("randread", "read", "4k", "rand read 4k", false);

    /** Seconds fio runs before it starts counting: blk-throttle lets a first slice through unthrottled. */
    static final int RAMP_SECONDS = 1;

    private final String rw;
    private final String direction;
    private final String blockSize;
    private final String label;
    private final boolean bandwidth;

    FioJob(String rw, String direction, String blockSize, String label, boolean bandwidth) {
        this.rw = rw;
        this.direction = direction;
        this.blockSize = blockSize;
        this.label = label;
        this.bandwidth = bandwidth;
    }

    /** {@code read} or {@code write}: the key of fio's JSON report, and the io.max direction. */
    String direction() {
        return direction;
    }

    String label() {
        return label;
    }

    /** True when the job is judged by its bandwidth (MiB/s), false when by its IOPS. */
    boolean bandwidth() {
        return bandwidth;
    }

    List<String> argv(Path file, long fileMebibytes, int runtimeSeconds) {
        return List.of("fio", "--output-format=json", "--name=" + name().toLowerCase(java.util.Locale.ROOT),
                "--filename=" + file, "--size=" + fileMebibytes + "M", "--rw=" + rw, "--bs=" + blockSize,
                "--direct=1", "--ioengine=psync", "--iodepth=1", "--time_based",
                "--runtime=" + runtimeSeconds, "--ramp_time=" + RAMP_SECONDS);
    }
}
