package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.LocalS3Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * {@code ObjectStore.getRange} into the caller's array or {@code ByteBuffer}: the bytes land where
 * asked (nothing around them is touched), ranges longer than the native side's 1 MiB batches come
 * whole, the end of the object cuts a range, and bad arguments are refused by name.
 */
@Timeout(120)
class RangeIntoTest {

    private static LocalS3Server server;
    private static ObjectStore store;
    private static final byte[] DATA = new byte[(3 << 20) + 123];

    @BeforeAll
    static void start() throws Exception {
        server = LocalS3Server.start("rangeinto");
        store = ObjectStore.open(server.uri("r/"), server.rootOptions());
        new SplittableRandom(34).nextBytes(DATA);
        store.put("o", DATA);
    }

    @AfterAll
    static void stop() {
        if (store != null) {
            store.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static byte[] slice(long from, int len) {
        return Arrays.copyOfRange(DATA, (int) from, (int) from + len);
    }

    @Test
    void anArrayGetsExactlyItsRegionAndLongRangesComeWhole() throws Exception {
        byte[] buf = new byte[DATA.length + 20];
        Arrays.fill(buf, (byte) 7);
        // Longer than a batch (1 MiB): several batches, one GET.
        assertEquals(DATA.length, store.getRange("o", 0, buf, 10, DATA.length));
        assertArrayEquals(DATA, Arrays.copyOfRange(buf, 10, 10 + DATA.length));
        for (int i : new int[] {0, 9, 10 + DATA.length, buf.length - 1}) {
            assertEquals(7, buf[i], "byte " + i + " outside the region");
        }
        byte[] small = new byte[1000];
        assertEquals(900, store.getRange("o", 12_345, small, 100, 900));
        assertArrayEquals(slice(12_345, 900), Arrays.copyOfRange(small, 100, 1000));
        // The end of the object cuts the range; at or past it: -1; nothing asked: 0.
        assertEquals(10, store.getRange("o", DATA.length - 10, small, 0, 100));
        assertArrayEquals(slice(DATA.length - 10, 10), Arrays.copyOf(small, 10));
        assertEquals(-1, store.getRange("o", DATA.length, small, 0, 100));
        assertEquals(0, store.getRange("o", 5, small, 0, 0));
    }

    @Test
    void buffersFillFromTheirPositionAndAdvanceIt() throws Exception {
        ByteBuffer direct = ByteBuffer.allocateDirect(2 << 20);
        direct.position(100);
        assertEquals((2 << 20) - 100, store.getRange("o", 1_000_000, direct));
        assertEquals(direct.capacity(), direct.position());
        byte[] got = new byte[(2 << 20) - 100];
        direct.position(100);
        direct.get(got);
        assertArrayEquals(slice(1_000_000, got.length), got);

        // A heap buffer that is a slice of a larger array: its array offset counts.
        byte[] backing = new byte[5000];
        ByteBuffer heap = ByteBuffer.wrap(backing, 1000, 3000).slice();
        heap.position(50);
        assertEquals(2950, store.getRange("o", 777, heap));
        assertEquals(3000, heap.position());
        assertArrayEquals(slice(777, 2950), Arrays.copyOfRange(backing, 1050, 4000));
        assertEquals(0, backing[1049]);
        assertEquals(0, backing[4000]);
        assertEquals(-1, store.getRange("o", DATA.length + 5, ByteBuffer.allocate(4)));
    }

    @Test
    void badArgumentsAreRefusedByName() {
        byte[] buf = new byte[10];
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class, () -> store.getRange("o", -1, buf, 0, 10));
        assertTrue(e.getMessage().contains("position -1 must be >= 0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> store.getRange("o", 0, buf, 5, 6));
        assertThrows(NullPointerException.class, () -> store.getRange("o", 0, (byte[]) null, 0, 1));
        assertThrows(
                IllegalArgumentException.class,
                () -> store.getRange("o", 0, ByteBuffer.allocate(4).asReadOnlyBuffer()));
        assertThrows(
                IllegalArgumentException.class,
                () -> store.getRange("o", 0, ByteBuffer.allocateDirect(4).asReadOnlyBuffer()));
        assertThrows(ObjectNotFoundException.class, () -> store.getRange("missing", 0, buf, 0, 10));
    }
}
