package io.lvmqos.kube;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What the watcher reads of an object the API server sends: of a PersistentVolume its name,
 * resourceVersion, CSI driver, volume handle and VolumeAttributesClass; of a
 * VolumeAttributesClass its name, resourceVersion, driver and parameters; of a Status (a watch's
 * ERROR event) its code, reason and message. A field the object does not have is empty; the rest
 * of the object is skipped as it is read, never held.
 */
record KubeObject(String name, String resourceVersion, String csiDriver, String volumeHandle, String className,
                  String driverName, Map<String, String> parameters, int code, String reason, String message) {

    KubeObject {
        Objects.requireNonNull(name);
        Objects.requireNonNull(resourceVersion);
        Objects.requireNonNull(csiDriver);
        Objects.requireNonNull(volumeHandle);
        Objects.requireNonNull(className);
        Objects.requireNonNull(driverName);
        parameters = Map.copyOf(parameters);
        Objects.requireNonNull(reason);
        Objects.requireNonNull(message);
    }

    /** Reads one object from {@code json}. */
    static KubeObject read(JsonStream json) throws IOException {
        Reading r = new Reading();
        json.object(member -> {
            switch (member) {
                case "metadata" -> json.object(field -> {
                    switch (field) {
                        case "name" -> r.name = json.string();
                        case "resourceVersion" -> r.resourceVersion = json.string();
                        default -> json.skip();
                    }
                });
                case "spec" -> json.object(field -> {
                    switch (field) {
                        case "csi" -> json.object(csi -> {
                            switch (csi) {
                                case "driver" -> r.csiDriver = json.string();
                                case "volumeHandle" -> r.volumeHandle = json.string();
                                default -> json.skip();
                            }
                        });
                        case "volumeAttributesClassName" -> r.className = json.string();
                        default -> json.skip();
                    }
                });
                case "driverName" -> r.driverName = json.string();
                case "parameters" -> json.object(key -> r.parameters.put(key, json.string()));
                case "code" -> r.code = code(json);
                case "reason" -> r.reason = json.string();
                case "message" -> r.message = json.string();
                default -> json.skip();
            }
        });
        return new KubeObject(r.name, r.resourceVersion, r.csiDriver, r.volumeHandle, r.className, r.driverName,
                r.parameters, r.code, r.reason, r.message);
    }

    private static int code(JsonStream json) throws IOException {
        String text = json.number();
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw json.error("a status code that is not a small integer: " + text);
        }
    }

    private static final class Reading {
        String name = "";
        String resourceVersion = "";
        String csiDriver = "";
        String volumeHandle = "";
        String className = "";
        String driverName = "";
        final Map<String, String> parameters = new HashMap<>();
        int code;
        String reason = "";
        String message = "";
    }
}
