package dev.vended.storage.delta.kernel;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.ReadOptions;
import dev.vended.storage.StorageException;

import io.delta.kernel.defaults.engine.fileio.InputFile;
import io.delta.kernel.defaults.engine.fileio.SeekableInputStream;

import java.io.IOException;

/**
 * Kernel's {@link InputFile} for one object. With a known size (from the log or a listing) opening
 * a stream sends no request; without, one HEAD, at most once per file. As in Kernel's own Hadoop
 * implementation, only a positive size counts as known: Kernel passes {@code 0} as a placeholder
 * (for {@code _last_checkpoint}, which may not exist) and {@code -1} for ranged reads; trusting a
 * 0 would read a missing file as empty, and Kernel then waits 3 s for it to "appear".
 */
final class KernelInputFile implements InputFile {

    private final ObjectStore store;
    private final String key;
    private final String path;
    private long size;

    KernelInputFile(ObjectStore store, String key, String path, long size) {
        this.store = store;
        this.key = key;
        this.path = path;
        this.size = size;
    }

    /**
     * The file's size in bytes: the one given if positive, else one HEAD.
     *
     * @throws java.io.FileNotFoundException if the object does not exist
     */
    @Override
    public long length() throws IOException {
        if (size <= 0) {
            try {
                size = store.head(key).size();
            } catch (StorageException e) {
                throw KernelErrors.of(path, e);
            }
        }
        return size;
    }

    @Override
    public String path() {
        return path;
    }

    /**
     * Opens a seekable stream (the adaptive read policy, pinned to the object's ETag when a HEAD
     * was needed).
     *
     * @throws java.io.FileNotFoundException if the object does not exist (at open when its size
     *     was not given, else at the first read)
     */
    @Override
    public SeekableInputStream newStream() throws IOException {
        try {
            ReadOptions options =
                    size <= 0
                            ? ReadOptions.defaults()
                            : ReadOptions.defaults().withKnownLength(size, null);
            return new KernelSeekableInputStream(path, store.openInput(key, options));
        } catch (StorageException e) {
            throw KernelErrors.of(path, e);
        }
    }

    @Override
    public String toString() {
        return "KernelInputFile{" + path + ", size=" + size + "}";
    }
}
