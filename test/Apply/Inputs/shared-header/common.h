#pragma once
#define TILE 16
