package dev.vended.storage;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Keeps secrets out of {@code toString}, logs and messages, by the same rules as the native core
 * ({@code crates/core/src/options/mod.rs}).
 *
 * <p><b>An allow-list decides</b>: the value of a storage option may be printed only when its key
 * is on the list of non-secret keys, {@code crates/core/src/options/non_secret_keys.txt}, which the
 * native core compiles in and this class reads from the library jar (resource {@value
 * #NON_SECRET_KEYS_RESOURCE}): one list for both sides. Keys are compared case-insensitively (ASCII
 * case folding). Every other value prints as {@value #REDACTED}, whatever its key is called, so a
 * misspelled secret key ({@code aws_session_tokn}) is hidden too. A printable value that looks
 * like a URL (contains {@code ://}) is printed without user info, query or fragment ({@link
 * #redactUri(String)}). If the list cannot be read, every value is treated as secret.
 */
public final class Redaction {

    /** What a secret value is printed as (the native core prints the same). */
    public static final String REDACTED = "***";

    /** Where the allow-list lies in the library jar (relative to this class's package). */
    static final String NON_SECRET_KEYS_RESOURCE = "non_secret_keys.txt";

    /** Keys on the list are short ASCII; a longer key is never on it. */
    private static final int MAX_KEY_LENGTH = 64;

    private static final Set<String> NON_SECRET_KEYS = loadNonSecretKeys();

    private Redaction() {}

    /** Reads the allow-list: one key a line, {@code #} starts a comment, blank lines ignored. */
    private static Set<String> loadNonSecretKeys() {
        Set<String> keys = new HashSet<>();
        try (InputStream in = Redaction.class.getResourceAsStream(NON_SECRET_KEYS_RESOURCE)) {
            if (in == null) {
                return Collections.emptySet(); // fail closed: everything is secret
            }
            BufferedReader r =
                    new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                int hash = line.indexOf('#');
                String key = asciiLower((hash >= 0 ? line.substring(0, hash) : line).trim());
                if (!key.isEmpty()) {
                    keys.add(key);
                }
            }
        } catch (IOException e) {
            return Collections.emptySet();
        }
        return Collections.unmodifiableSet(keys);
    }

    /** ASCII lowercase, as Rust's {@code to_ascii_lowercase} (other characters unchanged). */
    private static String asciiLower(String s) {
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                if (b == null) {
                    b = new StringBuilder(s);
                }
                b.setCharAt(i, (char) (c + ('a' - 'A')));
            }
        }
        return b == null ? s : b.toString();
    }

    /**
     * Whether the value of a storage option may be printed: its key is on the allow-list of
     * non-secret keys (compared case-insensitively).
     *
     * @param key the option key, may be {@code null} (then {@code false})
     * @return {@code true} only for keys on the list
     */
    public static boolean isNonSecretKey(String key) {
        return key != null
                && key.length() <= MAX_KEY_LENGTH
                && NON_SECRET_KEYS.contains(asciiLower(key));
    }

    /**
     * Whether the value of a storage option must never be printed: every key that is not on the
     * allow-list (see the class description), including unknown and misspelled keys.
     *
     * @param key the option key
     * @return {@code true} unless {@link #isNonSecretKey(String)}
     */
    public static boolean isSecretKey(String key) {
        return !isNonSecretKey(key);
    }

    /**
     * How the value of option {@code key} may be printed: {@value #REDACTED} for a secret key; the
     * value without user info, query or fragment when it contains {@code ://}; else the value.
     *
     * @param key the option key
     * @param value the value, may be {@code null}
     * @return the printable form ({@code null} for a {@code null} value of a non-secret key)
     */
    public static String printableValue(String key, String value) {
        if (isSecretKey(key)) {
            return REDACTED;
        }
        if (value != null && value.contains("://")) {
            return redactUri(value);
        }
        return value;
    }

    /**
     * A sorted, unmodifiable copy of {@code options} with every value replaced by its {@link
     * #printableValue printable form}, safe to print.
     *
     * @param options storage options, may be {@code null}
     * @return the redacted copy ({@code null} for {@code null})
     */
    public static Map<String, String> redact(Map<String, String> options) {
        if (options == null) {
            return null;
        }
        Map<String, String> out = new TreeMap<>();
        options.forEach((k, v) -> out.put(String.valueOf(k), printableValue(k, v)));
        return Collections.unmodifiableMap(out);
    }

    /**
     * The URI without user info, query and fragment, which may carry credentials (a SAS token, a
     * presigned URL's signature, {@code user:secret@}). Exactly the native core's {@code
     * printable_uri}: everything from the first {@code ?} or {@code #} is cut; user info before
     * the host becomes {@code ***@}.
     *
     * @param uri a URI, may be {@code null}
     * @return a printable form of it
     */
    public static String redactUri(String uri) {
        if (uri == null) {
            return null;
        }
        int cut = uri.length();
        for (int i = 0; i < uri.length(); i++) {
            char c = uri.charAt(i);
            if (c == '?' || c == '#') {
                cut = i;
                break;
            }
        }
        String u = uri.substring(0, cut);
        int sep = u.indexOf("://");
        if (sep < 0) {
            return u;
        }
        String scheme = u.substring(0, sep);
        String rest = u.substring(sep + 3);
        int slash = rest.indexOf('/');
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        String path = slash < 0 ? "" : rest.substring(slash);
        int at = authority.lastIndexOf('@');
        String host = at < 0 ? authority : authority.substring(at + 1);
        return scheme + "://" + (at < 0 ? "" : REDACTED + "@") + host + path;
    }
}
