package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.VendedCredentials;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

/** Secrets never appear in printable forms (no native library needed). */
class RedactionTest {

    @Test
    void secretKeys() {
        for (String k :
                new String[] {
                    "aws_secret_access_key",
                    "aws_session_token",
                    "AWS_SESSION_TOKEN",
                    "azure_storage_sas_key",
                    "azure_storage_account_key",
                    "google_service_account_key",
                    "proxy_password",
                    "bearer_token",
                    "client_secret",
                    "credentials"
                }) {
            assertTrue(Redaction.isSecretKey(k), k);
        }
        for (String k :
                new String[] {
                    "aws_access_key_id",
                    "aws_region",
                    "aws_endpoint",
                    "aws_allow_http",
                    "expires_at_millis"
                }) {
            assertFalse(Redaction.isSecretKey(k), k);
        }
    }

    @Test
    void redactsValuesOfSecretKeys() {
        Map<String, String> options = new LinkedHashMap<>();
        options.put("aws_access_key_id", "AKID1");
        options.put("aws_secret_access_key", "s3cr3t");
        options.put("aws_session_token", "t0k3n");
        options.put("aws_region", "us-east-1");
        String printed = Redaction.redact(options).toString();
        assertTrue(printed.contains("AKID1"), printed);
        assertTrue(printed.contains("us-east-1"), printed);
        assertFalse(printed.contains("s3cr3t"), printed);
        assertFalse(printed.contains("t0k3n"), printed);
    }

    @Test
    void redactsUserInfoAndQueryOfUris() {
        assertEquals("s3://bucket/prefix/", Redaction.redactUri("s3://bucket/prefix/"));
        String u = Redaction.redactUri("az://acct:k3y@container/p?sig=s1g&se=x");
        assertFalse(u.contains("k3y"), u);
        assertFalse(u.contains("s1g"), u);
        assertTrue(u.startsWith("az://"), u);
        assertTrue(u.contains("container/p"), u);
    }

    @Test
    void printableFormsHideSecrets() {
        VendedCredentials c = new VendedCredentials("AKID2", "s3cr3t", "t0k3n", 1767225600000L);
        assertFalse(c.toString().contains("s3cr3t"));
        assertFalse(c.toString().contains("t0k3n"));
        assertTrue(c.toString().contains("AKID2"));

        String builder =
                ObjectStore.builder("s3://b/p?token=abc")
                        .options(c.toOptions())
                        .option("aws_region", "us-east-1")
                        .toString();
        assertFalse(builder.contains("s3cr3t"), builder);
        assertFalse(builder.contains("t0k3n"), builder);
        assertFalse(builder.contains("abc"), builder);
    }
}
