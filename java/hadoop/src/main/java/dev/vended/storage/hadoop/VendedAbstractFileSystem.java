package dev.vended.storage.hadoop;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.UnsupportedFileSystemException;

/**
 * The {@link org.apache.hadoop.fs.AbstractFileSystem} of {@link VendedFileSystem}: what Hadoop's
 * {@link org.apache.hadoop.fs.FileContext} uses for a scheme, and so Spark's Structured Streaming
 * checkpoints ({@code FileContextBasedCheckpointFileManager}), Delta Lake's checksum files ({@code
 * _delta_log/<version>.crc}, written through the same manager) and its {@code HDFSLogStore}. Bind
 * it for each scheme bound to {@link VendedFileSystem}, beside the FileSystem key:
 *
 * <pre>
 * fs.s3a.impl=dev.vended.storage.hadoop.VendedFileSystem
 * fs.AbstractFileSystem.s3a.impl=dev.vended.storage.hadoop.VendedAbstractFileSystem
 * </pre>
 *
 * (in Spark with {@code spark.hadoop.} in front), likewise for {@code s3}, {@code s3n}, {@code
 * gs}, {@code abfs}, {@code abfss} and {@code vended} ({@link #SCHEMES}). Without it, {@code
 * FileContext} uses what Hadoop's {@code core-default.xml} names ({@code
 * org.apache.hadoop.fs.s3a.S3A} for {@code s3a}, which fails with {@code ClassNotFoundException}
 * without {@code hadoop-aws}, and would not use the tables' credentials with it), or nothing
 * ({@code s3}, {@code vended}: {@link UnsupportedFileSystemException}).
 *
 * <h2>What it is</h2>
 *
 * A {@link DelegateToFileSystem} over a <b>new instance</b> of the class {@code
 * fs.<scheme>.impl} names ({@link VendedFileSystem} or a subclass), initialized with the URI and
 * configuration Hadoop gives this constructor. {@code FileContext} creates an instance per
 * context, often; that costs no provider, store or request: tables' stores and credential
 * providers are JVM-wide, one per table configuration, whichever FileSystem instance asks (see
 * {@link VendedFileSystem}), so the instances share them with the FileSystems of the same
 * configuration. The URI is {@code scheme://bucket/}: a bucket, no port ({@link
 * #getUriDefaultPort()} is -1, so paths without a port match, whatever {@code fs.defaultFS} is).
 *
 * <p>Renames follow {@link org.apache.hadoop.fs.FileContext#rename}: {@link
 * Options.Rename#OVERWRITE} replaces an existing file (or an empty directory) at the destination;
 * a file is replaced by the server-side copy itself, so readers of the destination see the old or
 * the new file, never none. As every rename on this FileSystem, it is a copy and a delete, not
 * atomic, and without {@code OVERWRITE} the check that the destination does not exist is not
 * atomic with the copy (two racing renames to one destination may both succeed, the last
 * winning), as with S3A.
 *
 * <h2>Checked bindings</h2>
 *
 * The constructor refuses, with an {@link UnsupportedFileSystemException} naming the key to set
 * (Hadoop wraps it: it is the root cause of the {@link RuntimeException} that {@code
 * FileContext.getFileContext} throws), a scheme not in {@link #SCHEMES}, a URI without a bucket,
 * and a scheme whose {@code fs.<scheme>.impl} is not {@link VendedFileSystem} (or a subclass):
 * paths must not be served by this library's tables through {@code FileContext} and by another
 * FileSystem through the {@code FileSystem} API. {@code fs.vended.impl} may be unset: the {@code
 * vended} scheme is registered by the service file.
 *
 * <p>The converse, {@code fs.<scheme>.impl} set without this key, cannot be refused: the
 * FileSystem alone is a valid set-up and most jobs never use {@code FileContext}. So {@link
 * VendedFileSystem#initialize} logs a warning naming the key to set (once per scheme and value
 * per JVM, logger {@code dev.vended.storage.hadoop.VendedFileSystem}) when the key is unset or
 * names another class. It does <b>not</b> set the key itself: the {@link Configuration} it is
 * given is the caller's and shared (Spark's Hadoop configuration, used by every thread of the
 * driver), FileSystems are cached by scheme and user, not by configuration, so only the first
 * configuration to open a FileSystem would be changed; Spark makes a new copy of its
 * configuration for each streaming query and each executor gets its own, so the change would
 * reach some callers and not others, depending on which opened a FileSystem first, and
 * re-binding a scheme JVM-wide (a {@code core-site.xml} default resource) would take it from
 * other users of the same JVM. A configuration that says what it wants is the only reliable set-up.
 */
public class VendedAbstractFileSystem extends DelegateToFileSystem {

    /**
     * The schemes this class serves: those {@link VendedFileSystem} maps to a cloud ({@code
     * s3a}, {@code s3}, {@code s3n}: S3; {@code gs}: GCS; {@code abfs}, {@code abfss}: Azure;
     * {@code vended}: the cloud of {@link VendedFileSystem#VENDED_SCHEME_KEY}).
     */
    public static final Set<String> SCHEMES =
            Set.of("s3a", "s3", "s3n", "gs", "abfs", "abfss", "vended");

    private static final System.Logger LOG = System.getLogger(VendedFileSystem.class.getName());

    /** Scheme and value pairs already warned about by {@link #warnIfUnbound}. */
    private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

    /**
     * The constructor Hadoop's {@code AbstractFileSystem.createFileSystem} calls, for the scheme
     * of {@code uri} whose {@code fs.AbstractFileSystem.<scheme>.impl} names this class.
     *
     * @param uri the file system's URI, {@code scheme://bucket[/path]} (the path is ignored)
     * @param conf the configuration: its {@code vended.storage.*} keys configure the tables as
     *     for {@link VendedFileSystem}
     * @throws UnsupportedFileSystemException if the scheme is not one of {@link #SCHEMES}, the URI
     *     names no bucket, or {@code fs.<scheme>.impl} is not {@link VendedFileSystem} or a
     *     subclass (each message names the key to set)
     * @throws IOException if the FileSystem cannot be initialized (a malformed table
     *     configuration: as {@link VendedFileSystem#initialize})
     * @throws URISyntaxException if Hadoop cannot rebuild the URI
     */
    public VendedAbstractFileSystem(URI uri, Configuration conf)
            throws IOException, URISyntaxException {
        super(uri, delegateFor(uri, conf), conf, uri.getScheme(), false);
    }

    /**
     * A new instance of the FileSystem class of {@code uri}'s scheme, after checking the binding.
     *
     * @throws UnsupportedFileSystemException as the constructor says
     */
    private static FileSystem delegateFor(URI uri, Configuration conf)
            throws UnsupportedFileSystemException {
        String scheme = uri.getScheme();
        String afsKey = afsKey(scheme == null ? "<scheme>" : scheme);
        if (scheme == null || !SCHEMES.contains(scheme.toLowerCase(Locale.ROOT))) {
            throw new UnsupportedFileSystemException(
                    VendedAbstractFileSystem.class.getName()
                            + " serves the schemes "
                            + String.join(", ", new TreeSet<>(SCHEMES))
                            + ", not "
                            + uri
                            + ": remove "
                            + afsKey
                            + " or name the AbstractFileSystem of that scheme's FileSystem");
        }
        if (uri.getAuthority() == null) {
            throw new UnsupportedFileSystemException(
                    "a " + VendedAbstractFileSystem.class.getSimpleName()
                            + " URI names a bucket: " + scheme + "://bucket/, got " + uri);
        }
        String fsKey = "fs." + scheme + ".impl";
        Class<? extends FileSystem> c;
        try {
            c = FileSystem.getFileSystemClass(scheme, conf);
        } catch (IOException | RuntimeException e) {
            // none configured or registered, or a configured class that is not on the class path
            throw unbound(afsKey, fsKey, conf, e);
        }
        if (!VendedFileSystem.class.isAssignableFrom(c)) {
            throw unbound(afsKey, fsKey, conf, null);
        }
        try {
            return c.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            Throwable cause = e instanceof InvocationTargetException ? e.getCause() : e;
            UnsupportedFileSystemException u =
                    new UnsupportedFileSystemException(
                            fsKey + "=" + c.getName() + " cannot be created: " + cause);
            u.initCause(cause);
            throw u;
        }
    }

    private static UnsupportedFileSystemException unbound(
            String afsKey, String fsKey, Configuration conf, Exception cause) {
        String current = conf.getTrimmed(fsKey);
        UnsupportedFileSystemException e =
                new UnsupportedFileSystemException(
                        afsKey
                                + " names "
                                + VendedAbstractFileSystem.class.getName()
                                + " but "
                                + fsKey
                                + (current == null ? " is not set" : "=" + current)
                                + (cause == null ? "" : " (" + cause.getMessage() + ")")
                                + ": set "
                                + fsKey
                                + "="
                                + VendedFileSystem.class.getName()
                                + " too (in Spark: spark.hadoop."
                                + fsKey
                                + "), so that the FileSystem and FileContext APIs serve the"
                                + " scheme's paths alike");
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    /** {@code fs.AbstractFileSystem.<scheme>.impl}. */
    static String afsKey(String scheme) {
        return "fs.AbstractFileSystem." + scheme + ".impl";
    }

    /**
     * What is wrong with {@code conf}'s {@code FileContext} binding of {@code scheme}, served by
     * a {@link VendedFileSystem} (see the class description).
     *
     * @return the warning, naming the key to set; {@code null} if {@code
     *     fs.AbstractFileSystem.<scheme>.impl} names this class or a subclass, or if the scheme is
     *     not one of {@link #SCHEMES}
     */
    static String unboundWarning(String scheme, Configuration conf) {
        if (scheme == null || !SCHEMES.contains(scheme.toLowerCase(Locale.ROOT))) {
            return null;
        }
        String key = afsKey(scheme);
        String value = conf.getTrimmed(key);
        if (value != null && !value.isEmpty()) {
            if (value.equals(VendedAbstractFileSystem.class.getName())) {
                return null;
            }
            Class<?> c = conf.getClassByNameOrNull(value);
            if (c != null && VendedAbstractFileSystem.class.isAssignableFrom(c)) {
                return null;
            }
        }
        return "fs."
                + scheme
                + ".impl is "
                + VendedFileSystem.class.getSimpleName()
                + " but "
                + key
                + (value == null || value.isEmpty() ? " is not set" : "=" + value)
                + ": Hadoop's FileContext (Spark's streaming checkpoints, Delta's log store) will"
                + " not serve "
                + scheme
                + ":// paths with this library's tables; set "
                + key
                + "="
                + VendedAbstractFileSystem.class.getName()
                + " (in Spark: spark.hadoop."
                + key
                + ")";
    }

    /**
     * Logs {@link #unboundWarning} at {@code WARNING}, once per scheme and value per JVM.
     *
     * @param scheme the scheme a {@link VendedFileSystem} is initialized for
     * @param conf its configuration (only read)
     * @return whether it logged
     */
    static boolean warnIfUnbound(String scheme, Configuration conf) {
        String warning = unboundWarning(scheme, conf);
        if (warning != null && WARNED.add(scheme + "=" + conf.getTrimmed(afsKey(scheme)))) {
            LOG.log(System.Logger.Level.WARNING, warning);
            return true;
        }
        return false;
    }

    /**
     * -1: a bucket URI has no port, so a path without one matches this file system's URI
     * ({@code scheme://bucket/}).
     *
     * @return -1
     */
    @Override
    public int getUriDefaultPort() {
        return -1;
    }

    /**
     * Renames with {@link org.apache.hadoop.fs.FileContext#rename} semantics in one call of the
     * FileSystem (see {@link VendedFileSystem}'s {@code rename(Path, Path, Options.Rename...)}),
     * instead of Hadoop's default, which deletes an existing destination before renaming.
     *
     * @param src the source, a path of this file system
     * @param dst the destination, a path of this file system (of the same table)
     * @param overwrite whether an existing file or empty directory at {@code dst} is replaced
     * @throws java.io.FileNotFoundException if {@code src} does not exist, or {@code dst}'s parent
     *     does not exist
     * @throws org.apache.hadoop.fs.FileAlreadyExistsException if {@code dst} exists and {@code
     *     overwrite} is false, or {@code dst} is {@code src}
     * @throws org.apache.hadoop.fs.ParentNotDirectoryException if {@code dst}'s parent is a file
     * @throws IOException if one is a file and the other a directory, {@code dst} is a non-empty
     *     directory or lies inside {@code src}, the paths belong to different tables, or a request
     *     fails
     */
    @Override
    @SuppressWarnings("deprecation") // the FileSystem's rename with options
    public void renameInternal(Path src, Path dst, boolean overwrite) throws IOException {
        checkPath(src);
        checkPath(dst);
        ((VendedFileSystem) fsImpl)
                .rename(src, dst, overwrite ? Options.Rename.OVERWRITE : Options.Rename.NONE);
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "{uri=" + getUri() + ", fs=" + fsImpl + "}";
    }
}
