// Cold start on big code: a std::thread (libstdc++) runs embedded Python (libpython)
// which calls back into C through ctypes (libffi), down to stop_here.
#include <Python.h>
#include <thread>

extern "C" __attribute__((noinline, used)) void stop_here(void) { asm volatile(""); }
extern "C" __attribute__((noinline, used)) int swk_callback(int x) { stop_here(); return x + 1; }

static void run_python() {
    PyGILState_STATE g = PyGILState_Ensure();
    PyRun_SimpleString("import ctypes\n"
                       "def deep(n):\n"
                       "    return deep(n - 1) if n else ctypes.CDLL(None).swk_callback(41)\n"
                       "deep(20)\n");
    PyGILState_Release(g);
}

int main() {
    Py_Initialize();
    PyThreadState *main_state = PyEval_SaveThread();
    std::thread t(run_python);
    t.join();
    PyEval_RestoreThread(main_state);
    Py_Finalize();
    return 0;
}
