package dev.vended.storage.hadoop;

import static org.apache.hadoop.fs.Options.OpenFileOptions.FS_OPTION_OPENFILE_LENGTH;
import static org.apache.hadoop.fs.Options.OpenFileOptions.FS_OPTION_OPENFILE_READ_POLICY;
import static org.apache.hadoop.fs.Options.OpenFileOptions.FS_OPTION_OPENFILE_STANDARD_OPTIONS;

import dev.vended.storage.ReadOptions;
import dev.vended.storage.ReadPolicy;

import java.io.FileNotFoundException;
import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.impl.AbstractFSBuilderImpl;
import org.apache.hadoop.fs.impl.OpenFileParameters;

/**
 * The options of {@code FileSystem.openFile(path)} turned into the core's {@link ReadOptions}.
 *
 * <ul>
 *   <li>A length known from {@code withFileStatus(status)} (first) or {@value
 *       org.apache.hadoop.fs.Options.OpenFileOptions#FS_OPTION_OPENFILE_LENGTH}: the stream is
 *       opened without a HEAD; a missing object then fails at the first read instead. A length
 *       option that is negative or not a whole number (e.g. {@code 4096.0}) is ignored.
 *   <li>{@value org.apache.hadoop.fs.Options.OpenFileOptions#FS_OPTION_OPENFILE_READ_POLICY}: a
 *       comma-separated list whose first recognised value wins ({@link #policy}); unknown values
 *       are skipped, as Hadoop specifies.
 *   <li>The other standard options (buffer size, split start and end, ...) are accepted and
 *       ignored. A <b>mandatory</b> ({@code must()}) key that is not a standard option is refused
 *       with {@link IllegalArgumentException}.
 * </ul>
 */
final class OpenFileOptions {

    private OpenFileOptions() {}

    /**
     * The read options for an {@code openFile} call.
     *
     * @param path the path opened
     * @param parameters the builder's parameters
     * @return the read options (core defaults, with the length and policy given)
     * @throws IllegalArgumentException for a mandatory key that is not supported or a file status
     *     of another file
     * @throws FileNotFoundException if the file status given is a directory's
     */
    static ReadOptions of(Path path, OpenFileParameters parameters) throws FileNotFoundException {
        AbstractFSBuilderImpl.rejectUnknownMandatoryKeys(
                parameters.getMandatoryKeys(),
                FS_OPTION_OPENFILE_STANDARD_OPTIONS,
                "for " + path + " (VendedFileSystem supports only the standard openFile options)");
        Configuration options = parameters.getOptions();
        ReadOptions read = ReadOptions.defaults();
        ReadPolicy policy = policy(options.getTrimmedStrings(FS_OPTION_OPENFILE_READ_POLICY));
        if (policy != null) {
            read = read.withReadPolicy(policy);
        }
        FileStatus status = parameters.getStatus();
        long length;
        if (status != null) {
            if (!path.getName().equals(status.getPath().getName())) {
                throw new IllegalArgumentException(
                        "the file status given is of " + status.getPath() + ", not of " + path);
            }
            if (status.isDirectory()) {
                throw new FileNotFoundException("cannot open a directory: " + path);
            }
            length = status.getLen();
        } else {
            String v = options.getTrimmed(FS_OPTION_OPENFILE_LENGTH, "");
            try {
                length = v.isEmpty() ? -1 : Long.parseLong(v);
            } catch (NumberFormatException e) {
                length = -1; // not a whole number of bytes: ignored, as Hadoop's own filesystems do
            }
        }
        return length >= 0 ? read.withKnownLength(length, null) : read;
    }

    /**
     * The core policy for a list of Hadoop read policies: the first recognised one wins; {@code
     * null} when none is recognised (the core's default, {@link ReadPolicy#ADAPTIVE}, applies).
     *
     * <ul>
     *   <li>{@code random}, {@code vector}, {@code columnar}, {@code parquet}, {@code orc},
     *       {@code hbase}: {@link ReadPolicy#RANDOM};
     *   <li>{@code sequential}, {@code whole-file}, {@code avro}, {@code csv}, {@code json}:
     *       {@link ReadPolicy#SEQUENTIAL};
     *   <li>{@code adaptive}, {@code default}: {@link ReadPolicy#ADAPTIVE}.
     * </ul>
     *
     * @param values the values, in order, case-insensitive
     * @return the policy or {@code null}
     */
    static ReadPolicy policy(String... values) {
        for (String v : values) {
            switch (v.trim().toLowerCase(Locale.ROOT)) {
                case "random":
                case "vector":
                case "columnar":
                case "parquet":
                case "orc":
                case "hbase":
                    return ReadPolicy.RANDOM;
                case "sequential":
                case "whole-file":
                case "avro":
                case "csv":
                case "json":
                    return ReadPolicy.SEQUENTIAL;
                case "adaptive":
                case "default":
                    return ReadPolicy.ADAPTIVE;
                default:
                    // unknown: skipped, as Hadoop specifies
            }
        }
        return null;
    }
}
