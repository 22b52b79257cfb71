"""A Ctrl-C that arrives while a record is written and counted takes effect after both: the
resume line's count is the number of lines in the file (a race once seen as 99 printed for 100
lines)."""

import os
import signal

import pytest

from medvqa.core.run.interrupt import exit_on_second_interrupt, interrupts_deferred


def test_a_ctrl_c_inside_waits_for_the_block_and_goes_to_the_handler_in_force():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            done.append("written")  # still runs: the interrupt waits
            done.append("counted")
    assert done == ["written", "counted"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler in force is back


def test_the_first_ctrl_c_of_a_run_is_counted_once_by_its_handler():
    with exit_on_second_interrupt(lambda: "never printed"):
        with pytest.raises(KeyboardInterrupt):
            with interrupts_deferred():
                os.kill(os.getpid(), signal.SIGINT)
        # that was the first: a second one would exit; none comes, and the block ends normally
    with interrupts_deferred():
        pass  # nothing arrived: nothing is raised
