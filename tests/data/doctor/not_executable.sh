#!/bin/sh
# Deliberately not executable: toolmux doctor reports it.
exit 0
