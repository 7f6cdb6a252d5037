package io.lvmqos.lvm;

import io.lvmqos.errors.DriverException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The first block of a thin pool's metadata device, as the kernel's dm-thin writes it (the
 * {@code thin_disk_superblock} of drivers/md/dm-thin-metadata.c): little-endian, a checksum of the
 * rest of the block in its first four bytes. The driver reads it, and writes one field of it, only
 * to finish a pool change that a power cut left half sent with the pool inactive (see
 * {@link ThinPools}), and only on a copy of the metadata that thin_check then checks whole before
 * LVM swaps it in.
 *
 * <p>The checksum is persistent-data's {@code dm_bm_checksum}: CRC-32C of bytes 4 to the block's
 * end, with the seed of all ones and no final inversion, XORed with the superblock's constant
 * 160774. A block whose stored checksum differs from that is refused, so a layout the driver does
 * not know is never written.
 */
final class ThinPoolSuperblock {

    /** The metadata block size of dm-thin: 4 KiB. */
    static final int SIZE = 4096;
    private static final long MAGIC = 27022010;
    private static final int CHECKSUM_XOR = 160774;
    private static final int CHECKSUM_OFFSET = 0;
    private static final int MAGIC_OFFSET = 32;
    private static final int TRANSACTION_OFFSET = 48;

    private final byte[] block;

    private ThinPoolSuperblock(byte[] block) {
        this.block = block;
    }

    /** The superblock in {@code block}; FAILED_PRECONDITION when it is none, or its checksum is wrong. */
    static ThinPoolSuperblock of(byte[] block) {
        if (block.length != SIZE) {
            throw DriverException.internal("a thin pool's superblock is " + SIZE + " bytes, not " + block.length);
        }
        ByteBuffer buffer = little(block);
        if (buffer.getLong(MAGIC_OFFSET) != MAGIC) {
            throw DriverException.failedPrecondition("not a thin pool's metadata: its first block has magic "
                    + buffer.getLong(MAGIC_OFFSET) + ", not " + MAGIC);
        }
        int stored = buffer.getInt(CHECKSUM_OFFSET);
        int computed = checksum(block);
        if (stored != computed) {
            throw DriverException.failedPrecondition(String.format("the thin pool's superblock checksum is %08x and "
                    + "its contents give %08x: the metadata is damaged or of a layout the driver does not know",
                    stored, computed));
        }
        return new ThinPoolSuperblock(block.clone());
    }

    long transactionId() {
        return little(block).getLong(TRANSACTION_OFFSET);
    }

    /** The block with its transaction id set to {@code id}, and its checksum made anew. */
    byte[] withTransactionId(long id) {
        byte[] changed = block.clone();
        ByteBuffer buffer = little(changed);
        buffer.putLong(TRANSACTION_OFFSET, id);
        buffer.putInt(CHECKSUM_OFFSET, checksum(changed));
        return changed;
    }

    private static int checksum(byte[] block) {
        CRC32C crc = new CRC32C();
        crc.update(block, Integer.BYTES, SIZE - Integer.BYTES);
        // Java's CRC-32C inverts its result at the end; the kernel's crc32c() does not
        return ~(int) crc.getValue() ^ CHECKSUM_XOR;
    }

    private static ByteBuffer little(byte[] block) {
        return ByteBuffer.wrap(block).order(ByteOrder.LITTLE_ENDIAN);
    }
}
