package dev.vended.storage;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Helpers that keep secrets out of {@code toString}, logs and messages.
 *
 * <p>A storage option is treated as secret when its key (case-insensitively) contains {@code
 * secret}, {@code token}, {@code password}, {@code sas}, {@code key} or {@code credential}, except
 * the access key id ({@code aws_access_key_id}), which identifies the signer but is not secret.
 */
public final class Redaction {

    /** What a secret value is replaced with. */
    public static final String REDACTED = "<redacted>";

    private static final String[] SECRET_MARKERS = {
        "secret", "token", "password", "sas", "key", "credential"
    };

    private Redaction() {}

    /**
     * Whether the value of a storage option must never be printed.
     *
     * @param key the option key
     * @return {@code true} for secret keys (see the class description)
     */
    public static boolean isSecretKey(String key) {
        if (key == null) {
            return false;
        }
        String k = key.toLowerCase(Locale.ROOT);
        if (k.equals("aws_access_key_id") || k.equals("access_key_id")) {
            return false;
        }
        for (String marker : SECRET_MARKERS) {
            if (k.contains(marker)) {
                return true;
            }
        }
        return false;
    }

    /**
     * A sorted, unmodifiable copy of {@code options} with every secret value replaced by {@value
     * #REDACTED}, safe to print.
     *
     * @param options storage options, may be {@code null}
     * @return the redacted copy ({@code null} for {@code null})
     */
    public static Map<String, String> redact(Map<String, String> options) {
        if (options == null) {
            return null;
        }
        Map<String, String> out = new TreeMap<>();
        options.forEach(
                (k, v) -> out.put(String.valueOf(k), isSecretKey(k) && v != null ? REDACTED : v));
        return Collections.unmodifiableMap(out);
    }

    /**
     * The URI without user info and query, which may carry credentials (e.g. SAS tokens).
     *
     * @param uri a URI, may be {@code null}
     * @return a printable form of it
     */
    public static String redactUri(String uri) {
        if (uri == null) {
            return null;
        }
        try {
            URI u = new URI(uri);
            if (u.getRawUserInfo() == null && u.getRawQuery() == null) {
                return uri;
            }
            StringBuilder b = new StringBuilder();
            if (u.getScheme() != null) {
                b.append(u.getScheme()).append(':');
            }
            if (u.getRawAuthority() != null) {
                b.append("//");
                String authority = u.getRawAuthority();
                int at = authority.lastIndexOf('@');
                if (at >= 0) {
                    b.append(REDACTED).append('@');
                }
                b.append(authority.substring(at + 1));
            }
            if (u.getRawPath() != null) {
                b.append(u.getRawPath());
            }
            if (u.getRawQuery() != null) {
                b.append('?').append(REDACTED);
            }
            return b.toString();
        } catch (URISyntaxException e) {
            int q = uri.indexOf('?');
            int at = uri.indexOf('@');
            String s = q >= 0 ? uri.substring(0, q) + "?" + REDACTED : uri;
            return at >= 0 ? "<unparsable URI " + REDACTED + ">" : s;
        }
    }
}
