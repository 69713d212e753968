package dev.vended.storage.testkit;

import org.w3c.dom.Document;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;

/**
 * Parses an STS {@code AssumeRoleResponse} for {@link LocalS3Server#parseAssumeRoleResponse}
 * (no DTDs, no external entities).
 */
final class AssumeRoleXml {

    private AssumeRoleXml() {}

    /** See {@link LocalS3Server#parseAssumeRoleResponse(String)}. */
    static VendedCredentials parse(String xml) throws IOException {
        Document doc;
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            f.setXIncludeAware(false);
            f.setExpandEntityReferences(false);
            f.setNamespaceAware(false);
            DocumentBuilder b = f.newDocumentBuilder();
            b.setErrorHandler(
                    new org.xml.sax.helpers.DefaultHandler() {
                        @Override
                        public void fatalError(org.xml.sax.SAXParseException e)
                                throws SAXException {
                            throw e;
                        }
                    });
            doc = b.parse(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("cannot parse AssumeRole response: " + e.getMessage(), e);
        }
        String akid = element(doc, "AccessKeyId");
        String secret = element(doc, "SecretAccessKey");
        String token = element(doc, "SessionToken");
        String expiration = element(doc, "Expiration");
        long expiresAt;
        try {
            expiresAt = OffsetDateTime.parse(expiration).toInstant().toEpochMilli();
        } catch (DateTimeParseException e) {
            try {
                expiresAt = Instant.parse(expiration).toEpochMilli();
            } catch (DateTimeParseException e2) {
                throw new IOException("AssumeRole Expiration is not ISO-8601: " + expiration, e2);
            }
        }
        return new VendedCredentials(akid, secret, token, expiresAt);
    }

    private static String element(Document doc, String name) throws IOException {
        NodeList nodes = doc.getElementsByTagName(name);
        if (nodes.getLength() == 0) {
            throw new IOException("AssumeRole response has no <" + name + ">");
        }
        String text = nodes.item(0).getTextContent();
        if (text == null || text.isBlank()) {
            throw new IOException("AssumeRole response has an empty <" + name + ">");
        }
        return text.trim();
    }
}
