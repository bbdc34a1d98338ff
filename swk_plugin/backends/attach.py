"""What Walker.new_walker(pid=...) and new_walker() attach to: the ptrace back-end for a
live process, the calling thread's own capture for none (spec: ProcDebug, ProcSelf)."""
from ..linux.maps import read_proc_maps
from .ptrace import PtraceProcessState, Tracer
from .selfproc import SelfCapture, SelfProcessState


def process_state(pid=None):
    if pid is None:
        cap = SelfCapture()
        cap.capture()
        return SelfProcessState(cap)
    tracer = Tracer(pid)
    tracer.attach()
    try:
        tracer.stop()
        tracer.capture(0, read_proc_maps(pid))
    except BaseException:
        tracer.detach()
        raise
    return PtraceProcessState(tracer, live_stacks=True)
