#!/bin/sh
echo notes
