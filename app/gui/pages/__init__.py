"""One QWizardPage class per step; ids in :class:`PageId`."""
from enum import IntEnum


class PageId(IntEnum):
    WELCOME = 0
    SYSTEM = 1
    RECOMMENDATION = 2
    ENVIRONMENT = 3
    INSTALL = 4
    VERIFY = 5
    SPEEDTEST = 6
    DONE = 7
    # After the install: the user's environments (Welcome's second path), and a task on one of them.
    ENVS = 8
    ENV_TASK = 9
