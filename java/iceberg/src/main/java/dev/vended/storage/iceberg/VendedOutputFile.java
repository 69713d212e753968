package dev.vended.storage.iceberg;

import dev.vended.storage.StorageException;
import dev.vended.storage.WriteOptions;

import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;

import java.io.UncheckedIOException;

/**
 * An Iceberg {@link OutputFile} on a store. Nothing is visible until the stream is closed. {@link
 * #create()} is a create-only write: when the file exists, {@code close()} throws Iceberg's {@code
 * AlreadyExistsException} (atomic for a file of one part; for a multipart file checked just before
 * completing, see the library's WriteOptions).
 */
final class VendedOutputFile implements OutputFile {

    private final VendedFileIO io;
    private final String location;
    private final StoreRoute route;

    VendedOutputFile(VendedFileIO io, String location) {
        this.io = io;
        this.location = location;
        this.route = StoreRoute.of(location);
    }

    @Override
    public PositionOutputStream create() {
        return open(WriteOptions.defaults().withCreateOnly());
    }

    @Override
    public PositionOutputStream createOrOverwrite() {
        return open(WriteOptions.defaults());
    }

    private PositionOutputStream open(WriteOptions options) {
        try {
            return new VendedPositionOutputStream(
                    location, io.storeFor(location, route).openOutput(route.key(), options));
        } catch (StorageException e) {
            throw new UncheckedIOException("VendedFileIO: cannot write " + location + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String location() {
        return location;
    }

    @Override
    public InputFile toInputFile() {
        return new VendedInputFile(io, location, -1);
    }

    @Override
    public String toString() {
        return location;
    }
}
