// Found only through the -I of the database's response file (--options-file includes.rsp).
#pragma once
#define ALPHA_SCALE 2.0f
