/* A stand-in for Ascend's libdcmi.so with one card of two NPU chips and fixed
 * readings, so the DCMI sampler's loading, calls and unit conversions are
 * tested without an NPU. The signatures and structures are those of Huawei's
 * DCMI API reference. Chip 1 fails the HBM query (as a driver without it
 * does) and reports that it does not exist to the health query; chip 0's
 * HBM has ECC errors, chip 1 has ECC detection off; the library has no
 * dcmi_get_device_frequency. */
#include <string.h>

struct dcmi_hbm_info {
  unsigned long long memory_size;
  unsigned int freq;
  unsigned long long memory_usage;
  int temp;
  unsigned int bandwith_util_rate;
};
struct dcmi_ecc_info {
  int enable_flag;
  unsigned int single_bit_error_cnt, double_bit_error_cnt, total_single_bit_error_cnt,
      total_double_bit_error_cnt, single_bit_isolated_pages_cnt, double_bit_isolated_pages_cnt;
};
struct dcmi_chip_info {
  unsigned char chip_type[32];
  unsigned char chip_name[32];
  unsigned char chip_ver[32];
  unsigned int aicore_cnt;
};

int dcmi_init(void) { return 0; }
int dcmi_get_card_list(int* card_num, int* card_list, int list_len) {
  if (list_len < 1) return -8001;
  *card_num = 1;
  card_list[0] = 3; /* card ids need not start at 0 */
  return 0;
}
int dcmi_get_device_id_in_card(int card_id, int* device_id_max, int* mcu_id, int* cpu_id) {
  if (card_id != 3) return -8001;
  *device_id_max = 2;
  *mcu_id = -1;
  *cpu_id = -1;
  return 0;
}
int dcmi_get_device_utilization_rate(int card_id, int device_id, int input_type,
                                     unsigned int* rate) {
  if (card_id != 3 || device_id > 1) return -8001;
  switch (input_type) {
    case 2: *rate = device_id == 0 ? 87 : 5; return 0; /* AI Core */
    case 12: *rate = 40; return 0;                     /* vector core */
    case 3: *rate = 2; return 0;                       /* AI CPU */
    case 4: *rate = 11; return 0;                      /* control CPU */
    case 1: *rate = 30; return 0;                      /* memory */
    case 5: *rate = 7; return 0;                       /* memory bandwidth */
    default: return -8005;                             /* 10, 13: not on this chip */
  }
}
int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info* hbm) {
  if (card_id != 3 || device_id != 0) return -8005;
  hbm->memory_size = 65536; /* MB */
  hbm->freq = 1600;
  hbm->memory_usage = 3072;
  hbm->temp = 41;
  hbm->bandwith_util_rate = 12;
  return 0;
}
int dcmi_get_device_temperature(int card_id, int device_id, int* t) {
  *t = device_id == 0 ? 52 : 48;
  return card_id == 3 ? 0 : -8001;
}
int dcmi_get_device_power_info(int card_id, int device_id, int* power) {
  *power = device_id == 0 ? 3105 : 902; /* 0.1 W */
  return card_id == 3 ? 0 : -8001;
}
int dcmi_get_device_health(int card_id, int device_id, unsigned int* health) {
  *health = device_id == 0 ? 1u : 0xFFFFFFFFu;
  return card_id == 3 ? 0 : -8001;
}
int dcmi_get_device_chip_info(int card_id, int device_id, struct dcmi_chip_info* info) {
  memset(info, 0, sizeof *info);
  strcpy((char*)info->chip_type, "Ascend");
  strcpy((char*)info->chip_name, "910B3");
  strcpy((char*)info->chip_ver, "V1");
  info->aicore_cnt = 20;
  return card_id == 3 && device_id <= 1 ? 0 : -8001;
}

/* Chip 0 answers for its HBM (type 2) with 3 single-bit and 1 multi-bit
 * errors; chip 1 only for DDR (type 0), with ECC detection off. */
int dcmi_get_device_ecc_info(int card_id, int device_id, int type, struct dcmi_ecc_info* ecc) {
  if (card_id != 3) return -8001;
  memset(ecc, 0, sizeof *ecc);
  if (device_id == 0 && type == 2) {
    ecc->enable_flag = 1;
    ecc->single_bit_error_cnt = 3;
    ecc->double_bit_error_cnt = 1;
    return 0;
  }
  if (device_id == 1 && type == 0) return 0; /* enable_flag 0 */
  return -8005;
}
