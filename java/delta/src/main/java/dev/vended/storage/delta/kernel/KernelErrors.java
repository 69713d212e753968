package dev.vended.storage.delta.kernel;

import dev.vended.storage.ObjectAlreadyExistsException;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.StorageException;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;

/**
 * The library's exceptions as the checked exceptions Kernel acts on: a missing object is a {@link
 * FileNotFoundException} (Kernel reads "no {@code _delta_log}" as "no table", a missing {@code
 * _last_checkpoint} as "no checkpoint"), a create-only conflict a {@link
 * FileAlreadyExistsException} (Kernel retries its commit at the next version). Everything else
 * stays the library's {@link StorageException}, an {@link IOException} whose kind and
 * retryability the native core decided.
 * Messages name the path; the library's messages hold no secret.
 */
final class KernelErrors {

    private KernelErrors() {}

    /**
     * Maps a failure of an operation on {@code path}.
     *
     * @param path the fully qualified path Kernel asked for
     * @param e the library's exception
     * @return the exception to throw, with {@code e} as its cause
     */
    static IOException of(String path, StorageException e) {
        if (e instanceof ObjectNotFoundException) {
            return notFound(path, e);
        }
        if (e instanceof ObjectAlreadyExistsException) {
            return alreadyExists(path, e);
        }
        return e;
    }

    /**
     * A missing file.
     *
     * @param path the fully qualified path
     * @param cause the library's exception, or {@code null}
     * @return the exception
     */
    static FileNotFoundException notFound(String path, Throwable cause) {
        FileNotFoundException f = new FileNotFoundException("no such file: " + path);
        f.initCause(cause);
        return f;
    }

    /**
     * A create-only write or copy whose target exists.
     *
     * @param path the fully qualified path of the target
     * @param cause the library's exception
     * @return the exception
     */
    static FileAlreadyExistsException alreadyExists(String path, Throwable cause) {
        FileAlreadyExistsException f =
                new FileAlreadyExistsException(path, null, "the file exists already");
        f.initCause(cause);
        return f;
    }
}
