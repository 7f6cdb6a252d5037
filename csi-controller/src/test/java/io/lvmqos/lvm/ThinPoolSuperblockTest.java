package io.lvmqos.lvm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lvmqos.errors.DriverException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * On a real superblock: the first 4 KiB of what thin-provisioning-tools 0.9.0 wrote with
 * {@code thin_restore -i superblock-transaction-7.xml -o FILE} into a 4 MiB file (both in the test
 * resources under thin-pool/), which thin_check passed. The guest's KilledPoolChangeCheck has
 * thin_check pass the driver's rewrite of one on a real pool.
 */
class ThinPoolSuperblockTest {

    private static final int TRANSACTION_OFFSET = 48;

    @Test
    void theTransactionIdIsReadFromARealSuperblock() throws IOException {
        assertEquals(7, ThinPoolSuperblock.of(restored()).transactionId());
    }

    @Test
    void aMovedTransactionIdKeepsEveryOtherByteAndAValidChecksum() throws IOException {
        byte[] original = restored();
        byte[] moved = ThinPoolSuperblock.of(original).withTransactionId(8);
        assertEquals(8, ThinPoolSuperblock.of(moved).transactionId(), "the rewritten block passes its own checksum");
        assertArrayEquals(Arrays.copyOfRange(original, 4, TRANSACTION_OFFSET),
                Arrays.copyOfRange(moved, 4, TRANSACTION_OFFSET));
        assertArrayEquals(Arrays.copyOfRange(original, TRANSACTION_OFFSET + 8, ThinPoolSuperblock.SIZE),
                Arrays.copyOfRange(moved, TRANSACTION_OFFSET + 8, ThinPoolSuperblock.SIZE));
        assertArrayEquals(original, ThinPoolSuperblock.of(moved).withTransactionId(7),
                "moved back, it is the block thin_restore wrote, checksum and all");
    }

    @Test
    void aBlockWhoseChecksumDoesNotMatchIsRefused() throws IOException {
        byte[] damaged = restored();
        damaged[TRANSACTION_OFFSET] ^= 1;
        DriverException refused = assertThrows(DriverException.FailedPrecondition.class,
                () -> ThinPoolSuperblock.of(damaged));
        assertTrue(refused.getMessage().contains("checksum"), refused.getMessage());
    }

    @Test
    void aBlockThatIsNoThinPoolsIsRefused() {
        DriverException refused = assertThrows(DriverException.FailedPrecondition.class,
                () -> ThinPoolSuperblock.of(new byte[ThinPoolSuperblock.SIZE]));
        assertTrue(refused.getMessage().contains("not a thin pool's metadata"), refused.getMessage());
        assertThrows(DriverException.Internal.class, () -> ThinPoolSuperblock.of(new byte[512]));
    }

    private static byte[] restored() throws IOException {
        try (InputStream in = ThinPoolSuperblockTest.class.getResourceAsStream(
                "/thin-pool/superblock-transaction-7.bin")) {
            return in.readAllBytes();
        }
    }
}
