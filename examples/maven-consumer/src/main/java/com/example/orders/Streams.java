package com.example.orders;

// region:streams
import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.ReadOptions;
import dev.vended.storage.ReadPolicy;
import dev.vended.storage.SeekableObjectInputStream;
import dev.vended.storage.WriteOptions;
import java.io.IOException;

public final class Streams {
    /** Writes a large object in parts, then reads its tail and a byte in the middle. */
    public static int writeThenSeek(ObjectStore store) throws IOException {
        // Uploads 8 MiB parts, 4 at a time, while you write; visible only once close() returns.
        WriteOptions parts = WriteOptions.defaults().withPartSize(8 << 20).withMaxConcurrency(4);
        try (MultipartOutputStream out = store.openOutput("data/big.parquet", parts)) {
            out.write(new byte[64 << 20]);
        }
        // ADAPTIVE (the default): one streaming GET for a scan, ranged 1 MiB blocks after a
        // backward seek (a Parquet footer, then column chunks). Works far above 2 GiB.
        ReadOptions reads = ReadOptions.defaults().withReadPolicy(ReadPolicy.ADAPTIVE);
        try (SeekableObjectInputStream in = store.openInput("data/big.parquet", reads)) {
            byte[] footer = new byte[8];
            in.readFully(in.length() - footer.length, footer, 0, footer.length);
            in.seek(4);
            return in.read();
        }
    }

    private Streams() {}
}
// endregion
