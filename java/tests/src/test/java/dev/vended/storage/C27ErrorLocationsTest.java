package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.VendedCredentials;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * C27: a missing object, a missing bucket (container) and a denied request, through {@code get},
 * {@code head}, {@code openInput} and {@code list}, on S3 (the testkit's local endpoint) and
 * Azure (Azurite, SAS-signed): every message names the operation and the location in the
 * store's own terms ({@code s3://bucket/path}, {@code az://container/path}), never {@code
 * REDACTED}, a percent-encoded endpoint URL, a SAS signature or a secret; a missing bucket is
 * still an {@link ObjectNotFoundException}, its message telling it from a missing object.
 */
@Timeout(120)
class C27ErrorLocationsTest {

    /** Runs {@code call}, which must throw {@code type}; returns the message. */
    private static String message(Class<? extends StorageException> type, Executable call) {
        return assertThrows(type, call).getMessage();
    }

    /**
     * get, head, openInput of {@code key} and a list of {@code dir} (unless {@code listWorks}: then
     * the listing must succeed without {@code key}), each throwing {@code type}: operation to
     * message.
     */
    private static Map<String, String> calls(
            ObjectStore store,
            String key,
            boolean listWorks,
            Class<? extends StorageException> type)
            throws Exception {
        Map<String, String> out = new LinkedHashMap<>();
        out.put("get", message(type, () -> store.get(key)));
        out.put("head", message(type, () -> store.head(key)));
        out.put("openInput", message(type, () -> store.openInput(key).close()));
        if (listWorks) {
            for (ObjectMeta m : store.list("dir")) {
                assertFalse(m.path().equals(key), m.path());
            }
        } else {
            out.put("list", message(type, () -> store.list("dir")));
        }
        return out;
    }

    private static void assertClean(Map<String, String> messages, List<String> secrets) {
        for (Map.Entry<String, String> e : messages.entrySet()) {
            String m = e.getValue();
            System.out.println(e.getKey() + ": " + m);
            for (String bad :
                    List.of("REDACTED", "%2F", "%2f", "sig=", "http://", "https://", "127.0.0.1")) {
                assertFalse(m.contains(bad), "'" + bad + "' in: " + m);
            }
            for (String secret : secrets) {
                assertFalse(m.contains(secret), "a secret in: " + m);
            }
        }
    }

    /** The messages of a missing object at {@code at} with the GET answer's {@code code}. */
    private static Map<String, String> missingObject(String at, String code) {
        String no = "no object at " + at;
        Map<String, String> m = new LinkedHashMap<>();
        m.put("get", "GET " + at + ": 404 " + code + ": " + no);
        m.put("head", "HEAD " + at + ": 404 Not Found: " + no);
        m.put("openInput", "HEAD " + at + ": 404 Not Found: " + no);
        return m;
    }

    /** The messages of a missing bucket ({@code word} 'name') at {@code at}, list at {@code dir}. */
    private static Map<String, String> missingBucket(
            String at, String dir, String code, String word, String name) {
        String gone = word + " '" + name + "' does not exist";
        Map<String, String> m = new LinkedHashMap<>();
        m.put("get", "GET " + at + ": 404 " + code + ": " + gone);
        m.put("head", "HEAD " + at + ": 404 Not Found: " + gone);
        m.put("openInput", "HEAD " + at + ": 404 Not Found: " + gone);
        m.put("list", "LIST " + dir + ": 404 " + code + ": " + gone);
        return m;
    }

    /**
     * The messages of a denied request at {@code at} (GET answer {@code codeMessage}); a HEAD's
     * 403 has no body, so the store probes it with one GET and carries that answer's code (C29).
     */
    private static Map<String, String> denied(
            String at, String dir, String codeMessage, String listCodeMessage) {
        String head = "HEAD " + at + ": 403 " + codeMessage;
        Map<String, String> m = new LinkedHashMap<>();
        m.put("get", "GET " + at + ": 403 " + codeMessage);
        m.put("head", head);
        m.put("openInput", head);
        m.put("list", "LIST " + dir + ": 403 " + listCodeMessage);
        return m;
    }

    @Test
    void s3MessagesNameS3LocationsAndTellAMissingBucketFromAMissingObject() throws Exception {
        String base = "c27-" + UUID.randomUUID();
        try (LocalS3Server server = LocalS3Server.start("c27")) {
            VendedCredentials scoped =
                    server.issueCredentials(60_000, server.bucket() + "/" + base + "/elsewhere");
            List<String> secrets = new ArrayList<>(server.rootOptions().values());
            secrets.removeIf(v -> v.startsWith("http") || v.length() < 16);
            secrets.add(scoped.secretAccessKey());
            String at = "s3://c27/" + base;
            String nobucket = "s3://no-such-bucket-c27/" + base;
            try (ObjectStore store = ObjectStore.open(server.uri(base + "/"), server.rootOptions());
                    ObjectStore missing = ObjectStore.open(nobucket + "/", server.rootOptions());
                    ObjectStore scopedStore =
                            ObjectStore.open(server.uri(base + "/"), server.options(scoped))) {
                store.put("dir/present", "x".getBytes(StandardCharsets.UTF_8));

                Map<String, String> got =
                        calls(store, "dir/missing", true, ObjectNotFoundException.class);
                assertClean(got, secrets);
                assertEquals(missingObject(at + "/dir/missing", "NoSuchKey"), got);

                got = calls(missing, "dir/missing", false, ObjectNotFoundException.class);
                assertClean(got, secrets);
                assertEquals(
                        missingBucket(
                                nobucket + "/dir/missing",
                                nobucket + "/dir/",
                                "NoSuchBucket",
                                "bucket",
                                "no-such-bucket-c27"),
                        got);

                got = calls(scopedStore, "dir/present", false, CredentialsException.class);
                assertClean(got, secrets);
                assertEquals(
                        denied(
                                at + "/dir/present",
                                at + "/dir/",
                                "AccessDenied: object c27/" + base
                                        + "/dir/present is outside the credential scope",
                                "AccessDenied: the credential does not allow listing here (no"
                                        + " LIST permission, or scoped to other paths?): list"
                                        + " prefix \""
                                        + base
                                        + "/dir/\" is outside the credential scope"),
                        got);
            }
        }
    }

    @Test
    void azureMessagesNameAzLocationsNeverRedactedNorTheSas() throws Exception {
        try (AzuriteServer azurite = Emulators.startAzurite()) {
            azurite.createContainer("c27");
            long expires = System.currentTimeMillis() + 600_000;
            String sas = AzuriteServer.accountSas(expires, false);
            String badSas = AzuriteServer.accountSas(expires, true);
            List<String> secrets = List.of(signature(sas), signature(badSas));
            Map<String, String> good =
                    AzuriteServer.storeOptions(azurite.url(), Map.of("azure_storage_sas_token", sas));
            Map<String, String> bad =
                    AzuriteServer.storeOptions(
                            azurite.url(), Map.of("azure_storage_sas_token", badSas));
            try (ObjectStore store = ObjectStore.open("az://c27/p/", good);
                    ObjectStore missing = ObjectStore.open("az://no-such-container/p/", good);
                    ObjectStore rejected = ObjectStore.open("az://c27/p/", bad)) {
                store.put("dir/present", "x".getBytes(StandardCharsets.UTF_8));

                Map<String, String> got =
                        calls(store, "dir/missing", true, ObjectNotFoundException.class);
                assertClean(got, secrets);
                assertEquals(missingObject("az://c27/p/dir/missing", "BlobNotFound"), got);

                got = calls(missing, "dir/missing", false, ObjectNotFoundException.class);
                assertClean(got, secrets);
                assertEquals(
                        missingBucket(
                                "az://no-such-container/p/dir/missing",
                                "az://no-such-container/p/dir/",
                                "ContainerNotFound",
                                "container",
                                "no-such-container"),
                        got);

                got = calls(rejected, "dir/present", false, CredentialsException.class);
                assertClean(got, secrets);
                String refused =
                        "AuthorizationFailure: Server failed to authenticate the request. Make"
                                + " sure the value of the Authorization header is formed"
                                + " correctly including the signature.";
                assertEquals(
                        denied("az://c27/p/dir/present", "az://c27/p/dir/", refused, refused),
                        got);
            }
        }
    }

    /** The {@code sig} value of a SAS query string. */
    private static String signature(String sas) {
        for (String part : sas.split("&")) {
            if (part.startsWith("sig=")) {
                String sig = part.substring("sig=".length());
                assertTrue(sig.length() > 10, sas.length() + " characters of SAS");
                return sig;
            }
        }
        throw new AssertionError("no sig= in the SAS");
    }
}
