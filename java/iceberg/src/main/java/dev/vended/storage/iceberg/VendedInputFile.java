package dev.vended.storage.iceberg;

import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ReadOptions;
import dev.vended.storage.StorageException;

import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SeekableInputStream;

import java.io.UncheckedIOException;

/**
 * An Iceberg {@link InputFile} on a store. A length given by Iceberg (from a manifest or a
 * listing) is used as is: neither {@link #getLength()} nor {@link #newStream()} sends a HEAD then.
 */
final class VendedInputFile implements InputFile {

    private final VendedFileIO io;
    private final String location;
    private final StoreRoute route;
    private volatile long length;
    private volatile String eTag;

    /**
     * @param length the known length, or {@code -1}
     */
    VendedInputFile(VendedFileIO io, String location, long length) {
        this.io = io;
        this.location = location;
        this.route = StoreRoute.of(location);
        this.length = length;
    }

    @Override
    public long getLength() {
        if (length < 0) {
            ObjectMeta meta = head();
            length = meta.size();
            eTag = meta.eTag();
        }
        return length;
    }

    @Override
    public SeekableInputStream newStream() {
        ReadOptions options = ReadOptions.defaults();
        if (length >= 0) {
            options = options.withKnownLength(length, eTag);
        }
        try {
            return new VendedSeekableInputStream(
                    io.storeFor(location, route).openInput(route.key(), options));
        } catch (ObjectNotFoundException e) {
            throw new NotFoundException(e, "Location does not exist: %s", location);
        } catch (StorageException e) {
            throw new UncheckedIOException("VendedFileIO: cannot open " + location + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String location() {
        return location;
    }

    @Override
    public boolean exists() {
        try {
            io.storeFor(location, route).head(route.key());
            return true;
        } catch (ObjectNotFoundException e) {
            return false;
        } catch (StorageException e) {
            throw new UncheckedIOException("VendedFileIO: cannot check " + location + ": " + e.getMessage(), e);
        }
    }

    private ObjectMeta head() {
        try {
            return io.storeFor(location, route).head(route.key());
        } catch (ObjectNotFoundException e) {
            throw new NotFoundException(e, "Location does not exist: %s", location);
        } catch (StorageException e) {
            throw new UncheckedIOException("VendedFileIO: cannot read the length of " + location + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return location;
    }
}
