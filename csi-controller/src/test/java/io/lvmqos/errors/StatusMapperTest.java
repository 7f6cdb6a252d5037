package io.lvmqos.errors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StatusMapperTest {

    static Stream<Arguments> failures() {
        return Stream.of(
                Arguments.of(DriverException.invalidArgument("m"), Status.Code.INVALID_ARGUMENT),
                Arguments.of(DriverException.notFound("m"), Status.Code.NOT_FOUND),
                Arguments.of(DriverException.alreadyExists("m"), Status.Code.ALREADY_EXISTS),
                Arguments.of(DriverException.failedPrecondition("m"), Status.Code.FAILED_PRECONDITION),
                Arguments.of(DriverException.resourceExhausted("m"), Status.Code.RESOURCE_EXHAUSTED),
                Arguments.of(DriverException.outOfRange("m"), Status.Code.OUT_OF_RANGE),
                Arguments.of(DriverException.unavailable("m"), Status.Code.UNAVAILABLE),
                Arguments.of(DriverException.aborted("m"), Status.Code.ABORTED),
                Arguments.of(DriverException.deadlineExceeded("m"), Status.Code.DEADLINE_EXCEEDED),
                Arguments.of(DriverException.internal("m"), Status.Code.INTERNAL));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("failures")
    void eachDriverFailureMapsToItsCode(DriverException failure, Status.Code code) {
        assertEquals(code, StatusMapper.toStatus(failure).getCode());
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("failures")
    void theDescriptionIsTheMessage(DriverException failure, Status.Code code) {
        assertEquals("m", StatusMapper.toStatus(failure).getDescription());
    }

    @Test
    void everyKindOfDriverFailureIsInTheTable() {
        Set<Class<?>> tested = failures().map(arguments -> arguments.get()[0].getClass()).collect(Collectors.toSet());
        assertEquals(Set.of(DriverException.class.getPermittedSubclasses()), tested);
    }

    @Test
    void aPlainRuntimeExceptionIsInternal() {
        Status status = StatusMapper.toStatus(new IllegalStateException("boom"));
        assertEquals(Status.Code.INTERNAL, status.getCode());
        assertTrue(status.getDescription().contains("boom"), status.getDescription());
    }

    @Test
    void anInternalFailureKeepsItsCause() {
        IllegalStateException cause = new IllegalStateException("root");
        assertEquals(cause, DriverException.internal("m", cause).getCause());
    }

    @Test
    void anUnclassifiedExceptionIsUnexpected() {
        assertTrue(StatusMapper.isUnexpected(new NullPointerException()));
    }

    @Test
    void anInternalDriverFailureIsUnexpected() {
        assertTrue(StatusMapper.isUnexpected(DriverException.internal("m")));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("failures")
    void classifiedFailuresOtherThanInternalAreExpected(DriverException failure, Status.Code code) {
        assertEquals(code == Status.Code.INTERNAL, StatusMapper.isUnexpected(failure));
    }

    @Test
    void aDescriptionIsOneLineAndBoundedWhateverTheMessageEchoed() {
        Status status = StatusMapper.toStatus(DriverException.notFound("volume " + "z".repeat(4096) + "\nforged line"
                + " does not exist"));

        assertFalse(status.getDescription().contains("\n"), status.getDescription());
        assertTrue(status.getDescription().length() <= Echo.MESSAGE_BYTES + 64, status.getDescription());
    }

    @Test
    void anUnexpectedFailuresDescriptionIsOneLineToo() {
        Status status = StatusMapper.toStatus(new IllegalStateException("a\nb"));

        assertFalse(status.getDescription().contains("\n"), status.getDescription());
    }

    @Test
    void aPathThatIsNoPathIsTheClientsError() {
        var failure = assertThrows(java.nio.file.InvalidPathException.class,
                () -> java.nio.file.Path.of("/var/lib/kubelet/pods/a\u0000b/mount"));
        Status status = StatusMapper.toStatus(failure);
        assertEquals(Status.Code.INVALID_ARGUMENT, status.getCode());
        assertTrue(status.getDescription().contains("\\x00"), status.getDescription());
        assertFalse(StatusMapper.isUnexpected(failure));
    }
}
