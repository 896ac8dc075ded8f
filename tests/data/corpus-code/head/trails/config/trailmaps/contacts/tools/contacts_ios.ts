// Stand-in for the iOS Contacts scripted tools the corpus trails record (see ../../../../../../../NOTICE).
import { trailblaze } from "@trailblaze/scripting";

export const contacts_ios_launchApp = trailblaze.tool<Record<string, never>>(
  { description: "Launch iOS Contacts." },
  async () => "launched",
);

export const contacts_ios_openApp = trailblaze.tool<{ dismissKeyboard?: boolean }>(
  { description: "Cold-start Contacts on its list root." },
  async (input) => (input.dismissKeyboard ? "opened, keyboard dismissed" : "opened"),
);

export const contacts_ios_dismissKeyboardIfPresent = trailblaze.tool<Record<string, never>>(
  { description: "Dismiss the keyboard when one is shown." },
  async () => "no keyboard shown",
);

export const contacts_ios_openContact = trailblaze.tool<{ name: string; expectedHeading?: string }>(
  { description: "Open a contact's detail card from the list." },
  async (input) => `opened ${input.name}`,
);

export const contacts_ios_searchContacts = trailblaze.tool<{
  query: string;
  rowText?: string;
  openFirstResult?: boolean;
}>({ description: "Search the contacts list." }, async (input) => `searched ${input.query}`);

export const contacts_ios_searchAndVerify = trailblaze.tool<{ query: string; expectedName: string }>(
  { description: "Search and check that a contact is listed." },
  async (input) => `found ${input.expectedName}`,
);

export const contacts_ios_createContact = trailblaze.tool<{
  firstName: string;
  lastName?: string;
  phoneNumber?: string;
}>({ description: "Create a contact." }, async (input) => `created ${input.firstName}`);

export const contacts_ios_deleteContact = trailblaze.tool<{ name: string }>(
  { description: "Delete a contact." },
  async (input) => `deleted ${input.name}`,
);

export const contacts_ios_addPhoneNumber = trailblaze.tool<{ name: string; phoneNumber: string }>(
  { description: "Add a phone number to a contact." },
  async (input) => `added ${input.phoneNumber}`,
);

export const contacts_ios_verifyContactStructure = trailblaze.tool<{
  name: string;
  requireFields?: string[];
}>({ description: "Check which fields a contact card shows." }, async (input) => `verified ${input.name}`);
