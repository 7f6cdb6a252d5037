package io.lvmqos.e2e.guest;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import csi.v1.Csi;
import io.lvmqos.e2e.CsiClient;
import java.util.Base64;

/**
 * The controller calls of the crash-state workload ({@link CrashStatesCheck}), each kept in the
 * journal with its request's bytes so that a state that cut one short can retry exactly the call
 * that was in flight, as the external-provisioner, -snapshotter or -resizer would after a restart.
 */
enum CrashOp {
    CREATE_VOLUME((c, b) -> c.controller().createVolume(Csi.CreateVolumeRequest.parseFrom(b))),
    DELETE_VOLUME((c, b) -> c.controller().deleteVolume(Csi.DeleteVolumeRequest.parseFrom(b))),
    CREATE_SNAPSHOT((c, b) -> c.controller().createSnapshot(Csi.CreateSnapshotRequest.parseFrom(b))),
    DELETE_SNAPSHOT((c, b) -> c.controller().deleteSnapshot(Csi.DeleteSnapshotRequest.parseFrom(b))),
    CREATE_GROUP_SNAPSHOT((c, b) -> c.groupController().createVolumeGroupSnapshot(
            Csi.CreateVolumeGroupSnapshotRequest.parseFrom(b))),
    EXPAND_VOLUME((c, b) -> c.controller().controllerExpandVolume(Csi.ControllerExpandVolumeRequest.parseFrom(b))),
    MODIFY_VOLUME((c, b) -> c.controller().controllerModifyVolume(Csi.ControllerModifyVolumeRequest.parseFrom(b)));

    /** One call: the request's bytes parsed as its message and sent. */
    private interface Call {
        Message send(CsiClient client, byte[] request) throws InvalidProtocolBufferException;
    }

    private final Call call;

    CrashOp(Call call) {
        this.call = call;
    }

    Message send(CsiClient client, Message request) {
        try {
            return call.send(client, request.toByteArray());
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException(this + " takes another request than " + request.getClass(), e);
        }
    }

    /** Sends the request the journal kept (one word of base64). */
    Message retry(CsiClient client, String journalled) throws InvalidProtocolBufferException {
        return call.send(client, Base64.getDecoder().decode(journalled));
    }

    static String journalWord(Message request) {
        return Base64.getEncoder().encodeToString(request.toByteArray());
    }
}
