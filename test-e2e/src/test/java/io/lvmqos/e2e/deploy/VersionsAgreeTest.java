package io.lvmqos.e2e.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.lvmqos.e2e.ProjectVersion;
import io.lvmqos.e2e.guest.GuestContainerd;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.xml.sax.SAXException;

/**
 * One version, the Maven project's (the top-level pom.xml's), is the one the driver reports and the one
 * the image, the chart and the manifests name: a release changes it in pom.xml and in the files
 * these tests name, and nowhere is it left behind.
 */
class VersionsAgreeTest {

    private static final List<String> MODULES = List.of("proto", "csi-controller", "csi-node", "test-e2e");

    private static Element project(Path pom) {
        try {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            Document document = factory.newDocumentBuilder().parse(pom.toFile());
            return document.getDocumentElement();
        } catch (ParserConfigurationException | SAXException | IOException e) {
            throw new AssertionError("cannot read " + pom, e);
        }
    }

    /** The text of the element's direct child of that name, or "" when there is none. */
    private static String child(Element element, String name) {
        for (var node = element.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element child && child.getTagName().equals(name)) {
                return child.getTextContent().strip();
            }
        }
        return "";
    }

    /** The project's version: the top-level pom's own {@code <version>}. */
    static String projectVersion() {
        Element project = project(DeployTree.root().resolve("pom.xml"));
        String version = child(project, "version");
        assertFalse(version.isEmpty(), "pom.xml has no <version>");
        return version;
    }

    /** The tag scripts/build-image gives its images, as it prints it with --tag. */
    static String buildImageTag() throws IOException, InterruptedException {
        Path script = DeployTree.root().resolve("scripts/build-image");
        Process process = new ProcessBuilder("/bin/sh", script.toString(), "--tag").redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("scripts/build-image --tag did not finish in 30 s");
        }
        assertEquals(0, process.exitValue(), "scripts/build-image --tag: " + out);
        return out.strip();
    }

    @Test
    void everyModuleIsOfTheProjectsVersion() {
        String version = projectVersion();
        for (String module : MODULES) {
            Element project = project(DeployTree.root().resolve(module).resolve("pom.xml"));
            Element parent = (Element) project.getElementsByTagName("parent").item(0);
            assertEquals(version, child(parent, "version"), module + "/pom.xml's parent version");
            assertEquals("", child(project, "version"), module + "/pom.xml inherits the version, sets none");
        }
    }

    /** `lvmqos --version` and Identity's GetPluginInfo vendor_version both come from the build's properties. */
    @Test
    void theDriverReportsIt() throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process process = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                "io.lvmqos.server.Main", "--version").redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("lvmqos --version did not finish in 60 s");
        }
        assertEquals(0, process.exitValue(), out);
        assertEquals("lvmqos " + projectVersion(), out.strip());
        assertEquals(projectVersion(), ProjectVersion.get());
    }

    @Test
    void theChartsAppVersionAndVersionAreIt() {
        YamlNode chart = DeployTree.parse(HelmChart.dir().resolve("Chart.yaml")).getFirst();
        assertEquals(projectVersion(), String.valueOf(chart.get("appVersion").value()), "Chart.yaml appVersion");
        assertEquals(projectVersion(), String.valueOf(chart.get("version").value()),
                "Chart.yaml version: the chart is released with the driver");
    }

    @Test
    void theManifestsTagTheDriverImageWithIt() {
        YamlNode override = DeployTree.kustomization().get("images").items().getFirst();
        assertEquals(projectVersion(), String.valueOf(override.get("newTag").value()), "kustomization.yaml newTag");
        NodePod pod = NodePod.fromBase();
        assertEquals("lvmqos:" + projectVersion(), pod.plugin().get("image").text(), "daemonset.yaml, the driver");
        assertEquals("lvmqos:" + projectVersion(), pod.container("lvm-config").get("image").text(),
                "daemonset.yaml, the init container");
    }

    @Test
    void buildImageTagsItsImagesWithIt() throws IOException, InterruptedException {
        assertEquals(projectVersion(), buildImageTag());
    }

    @Test
    void theTestNodeImportsTheImagesByIt() {
        for (String image : List.of(GuestContainerd.DRIVER_IMAGE, GuestContainerd.PAUSE_IMAGE,
                GuestContainerd.WORKLOAD_IMAGE, GuestContainerd.FIO_IMAGE)) {
            assertEquals(projectVersion(), image.substring(image.lastIndexOf(':') + 1), image);
        }
    }
}
